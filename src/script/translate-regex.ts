/*
 * JavaScript regex syntax, read for RE2. Scripts are written in JavaScript's syntax; RE2 (the
 * linear-time engine, see compile-regex.ts) reads most of it alike, and this rewrites the rest
 * so the meaning stays JavaScript's, or refuses it with how to do without.
 */

/** Why a regex cannot be used, as a message and a hint for the script error. */
export interface RegexProblem {
  message: string;
  hint: string;
}

// What JavaScript's \s matches, spelt for RE2 (whose \s is ASCII only).
const jsSpace = "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";
// What JavaScript's . leaves out (RE2's leaves out \n only).
const jsLineEnds = "\\n\\r\\x{2028}\\x{2029}";

const linear = "match.regex runs on a linear-time engine (RE2), so no message can stall the server";

function backreference(ref: string): RegexProblem {
  return {
    message: `invalid regex: ${ref} is a backreference, which matching cannot run in linear time`,
    hint: `${linear}, and it has no backreferences: write the group's pattern again instead of ${ref}, like (\\w+) (\\w+)`,
  };
}

function lookaround(opener: string): RegexProblem {
  const kind = opener.includes("<") ? "lookbehind" : "lookahead";
  return {
    message: `invalid regex: ${opener} starts a ${kind}, which matching cannot run in linear time`,
    hint: `${linear}, and it has no lookarounds: match the text itself and capture the part you need, or put a fixed text in match.contains`,
  };
}

/** The escape at `i` (a backslash), in RE2's words, and how many characters it took. */
function escapeAt(source: string, i: number, inClass: boolean): { out: string; length: number } | RegexProblem {
  const e = source[i + 1] ?? "";
  if (!inClass && /[1-9]/.test(e)) return backreference(`\\${e}`);
  if (e === "k" && source[i + 2] === "<") return backreference(`\\k<${source.slice(i + 3, source.indexOf(">", i) + 1 || undefined)}`);
  const hex4 = source.slice(i + 2, i + 6);
  if (e === "u" && /^[0-9a-fA-F]{4}$/.test(hex4)) return { out: `\\x{${hex4}}`, length: 6 };
  if (e === "c" && /^[A-Za-z]$/.test(source[i + 2] ?? "")) return { out: `\\x{${(source.charCodeAt(i + 2) % 32).toString(16)}}`, length: 3 };
  if (e === "b" && inClass) return { out: "\\x{8}", length: 2 };
  if (e === "s") return { out: inClass ? jsSpace : `[${jsSpace}]`, length: 2 };
  if (e === "S" && !inClass) return { out: `[^${jsSpace}]`, length: 2 };
  return { out: `\\${e}`, length: 2 };
}

/**
 * Rewrites a JavaScript regex for RE2 with the same meaning: `.` and `\s` as JavaScript reads
 * them, `\uXXXX`, `\cX`, `[\b]`, `[]` and `[^]`. Refuses backreferences and lookarounds, which
 * no linear-time engine runs.
 */
export function translateRegex(source: string): { pattern: string } | RegexProblem {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const e = escapeAt(source, i, inClass);
      if ("message" in e) return e;
      out += e.out;
      i += e.length - 1;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      // In JavaScript [] matches nothing and [^] anything; RE2 reads a ] right after [ or [^
      // as a literal ] in the class.
      const negated = source[i + 1] === "^";
      const close = i + (negated ? 2 : 1);
      if (source[close] === "]") {
        out += negated ? "[\\x{0}-\\x{10ffff}]" : "[^\\x{0}-\\x{10ffff}]";
        i = close;
      } else {
        inClass = true;
        out += negated ? "[^" : "[";
        if (negated) i++;
      }
    } else if (c === "(" && /^\(\?(=|!|<=|<!)/.test(source.slice(i, i + 4))) {
      return lookaround(/^\(\?(=|!|<=|<!)/.exec(source.slice(i, i + 4))![0]);
    } else {
      out += c === "." ? `[^${jsLineEnds}]` : c;
    }
  }
  return { pattern: out };
}

/**
 * An upper bound of the RE2 program a regex compiles to, from its text alone: each character,
 * escape or class one instruction, a group two more, and `{n,m}` copies what it repeats up to
 * 2m times. Compiling costs about a microsecond per instruction, and `a{1000}` 290 times over
 * would take a second: a regex whose bound is far past the limit is refused uncompiled.
 */
export function programBound(source: string): number {
  const frames: { size: number; last: number }[] = [{ size: 0, last: 0 }];
  const top = () => frames[frames.length - 1]!;
  const atom = (n: number) => {
    top().size += n;
    top().last = n;
  };
  const count = /\{(\d+)(?:,(\d*))?\}/y;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    count.lastIndex = i;
    const m = c === "{" ? count.exec(source) : null;
    if (c === "\\") {
      i++;
      atom(1);
    } else if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
      atom(1);
    } else if (c === "(") {
      frames.push({ size: 0, last: 0 });
    } else if (c === ")" && frames.length > 1) {
      atom(frames.pop()!.size + 2);
    } else if (c === "|" || c === "*" || c === "+" || c === "?") {
      top().size += 1;
    } else if (m) {
      const times = 2 * Math.max(Number(m[1]), Number(m[2] || 0) || Number(m[1]) + 1);
      top().size += top().last * (times - 1);
      top().last *= times;
      i += m[0].length - 1;
    } else {
      atom(1);
    }
  }
  return frames.reduce((sum, f) => sum + f.size, 0);
}
