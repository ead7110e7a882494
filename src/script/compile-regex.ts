import { createRequire } from "node:module";
import type { RE2JS } from "re2js";
import { maxRegexChars, maxRegexInputChars, maxRegexProgram } from "./script-limits.js";
import { programBound, translateRegex, type RegexProblem } from "./translate-regex.js";
import { errorText } from "../shared/status-error.js";

/**
 * A script's `match.regex`, compiled for a linear-time engine. JavaScript's own engine
 * backtracks: `^(a+)+$` against 30 characters runs for seconds, `.*x` against 64 KiB for
 * seconds too, and every session waits meanwhile. RE2 (the re2js port) runs in time linear in
 * the input whatever the regex, so a caller's message cannot stall the server.
 */
export interface ScriptRegex {
  /** Capture groups, named ones included. */
  readonly groups: number;
  /** Names of the named groups, `(?<name>...)`. */
  readonly names: string[];
  /** Whether the text matches, anywhere in its first maxRegexInputChars characters. */
  test(text: string): boolean;
  /** The match and its groups, shaped like RegExp.prototype.exec's (unmatched groups undefined). */
  exec(text: string): RegExpExecArray | null;
}

let re2: typeof RE2JS | undefined;

/**
 * re2js, loaded the first time a script has a regex rather than with the library: it is the
 * largest module the script checker reaches (Unicode tables built at load), and most scripts
 * match without a regex (issue 31, import cost). require() is synchronous, as compiling a script
 * is; re2js ships a CommonJS build beside its ES module, and is a dependency of the package.
 */
function re2js(): typeof RE2JS {
  return (re2 ??= (createRequire(import.meta.url)("re2js") as typeof import("re2js")).RE2JS);
}

/** RE2's "error parsing regexp: missing closing ): `x(`" as "missing closing )". */
function re2Reason(err: unknown): string {
  const text = errorText(err);
  return text.replace(/^error parsing regexp: /, "").replace(/: `[\s\S]*`$/, "");
}

function tooLarge(steps: string): RegexProblem {
  return {
    message: `the regex is too large: it compiles to ${steps} steps, and the most is ${maxRegexProgram} (matching costs up to that many steps per character)`,
    hint: "counts like {1,500} or .{0,300} repeat their part that many times: write + or * instead, or match a shorter part",
  };
}

/** Compiles a script regex (JavaScript syntax) for RE2, or says why it cannot be used. */
export function compileRegex(source: string, ignoreCase: boolean): { regex: ScriptRegex } | { problem: RegexProblem } {
  if (source.length > maxRegexChars) {
    return {
      problem: {
        message: `the regex is ${source.length} characters long; the most is ${maxRegexChars}`,
        hint: "match a shorter, telling part of the message, or use match.contains for a fixed text",
      },
    };
  }
  const translated = translateRegex(source);
  if (!("pattern" in translated)) return { problem: translated };
  const bound = programBound(source);
  if (bound > 4 * maxRegexProgram) return { problem: tooLarge(`more than ${4 * maxRegexProgram}`) };
  const RE2 = re2js();
  let re: RE2JS;
  try {
    re = RE2.compile(translated.pattern, ignoreCase ? RE2.CASE_INSENSITIVE : 0);
  } catch (err) {
    return {
      problem: {
        message: `invalid regex: /${source}/: ${re2Reason(err)}`,
        hint: "match.regex is a JavaScript regex: escape a literal ( ) [ ] { } . * + ? with a backslash",
      },
    };
  }
  const size = re.matcher("").programSize();
  if (size > maxRegexProgram) return { problem: tooLarge(String(size)) };
  const names = Object.keys(re.namedGroups());
  const window = (text: string) => (text.length > maxRegexInputChars ? text.slice(0, maxRegexInputChars) : text);
  return {
    regex: {
      groups: re.groupCount(),
      names,
      test: (text) => re.test(window(text)),
      // test() first: it runs on the DFA, much faster than exec's capturing engine on a miss.
      exec: (text) => {
        const input = window(text);
        return re.test(input) ? (re.exec(input) as RegExpExecArray | null) : null;
      },
    },
  };
}
