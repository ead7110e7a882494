import { Role } from "../../gen/modelstub/v1/model_pb.js";
import { compileRegex, type ScriptRegex } from "./compile-regex.js";
import type { Matcher, RequestView } from "./compiled-script.js";
import type { Report } from "./report.js";
import type { EntryInput } from "./script-schema.js";

type MatchInput = NonNullable<EntryInput["match"]>;

/**
 * A script's text as the words of a condition quote it, cut at 100 characters: the words go into
 * NOT_FOUND status messages (three candidates), which must stay small enough for any client.
 */
function short(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

interface Condition {
  words: string;
  holds(view: RequestView): boolean;
}

/**
 * Compiles a `match:` at `path` (an entry's, or a fault rule's point) with its regex, if any;
 * undefined, reported at `path.regex`, when the regex cannot be compiled. The regex is returned
 * too: its groups are what the entry's templates may name.
 */
export function compileMatch(match: MatchInput, path: (string | number)[], report: Report): { matcher: Matcher; regex: ScriptRegex | undefined } | undefined {
  let regex: ScriptRegex | undefined;
  if (match.regex !== undefined) {
    const compiled = compileRegex(match.regex, match.ignore_case === true);
    if ("problem" in compiled) {
      report([...path, "regex"], compiled.problem.message, compiled.problem.hint);
      return undefined;
    }
    regex = compiled.regex;
  }
  return { matcher: compileMatcher(match, regex), regex };
}

/**
 * Compiles a `match:` mapping. Its regex comes compiled (compileRegex, which also said why one
 * could not be), with `ignore_case` already applied.
 */
export function compileMatcher(match: MatchInput, regex: ScriptRegex | undefined): Matcher {
  const conditions: Condition[] = [];
  const fold = match.ignore_case ? (s: string) => s.toLowerCase() : (s: string) => s;
  if (match.contains !== undefined) {
    const needle = fold(match.contains);
    conditions.push({ words: `last user message contains ${JSON.stringify(short(match.contains))}`, holds: (v) => fold(v.lastUser).includes(needle) });
  }
  if (match.conversation_contains !== undefined) {
    const needle = fold(match.conversation_contains);
    conditions.push({
      words: `a user message contains ${JSON.stringify(short(match.conversation_contains))}`,
      holds: (v) => v.messages.some((m) => m.role === Role.USER && fold(m.content).includes(needle)),
    });
  }
  if (match.model !== undefined) {
    const model = match.model;
    conditions.push({ words: `model is ${JSON.stringify(short(model))}`, holds: (v) => v.model === model });
  }
  if (match.unknown_model !== undefined) {
    const want = match.unknown_model;
    conditions.push({ words: want ? "model is not one the script lists" : "model is one the script lists", holds: (v) => v.modelListed !== want });
  }
  if (match.tool_result !== undefined) {
    const want = match.tool_result;
    if (want === true) conditions.push({ words: "last message is a tool result", holds: (v) => v.lastIsToolResult });
    else if (want === false) conditions.push({ words: "last message is not a tool result", holds: (v) => !v.lastIsToolResult });
    else
      conditions.push({
        words: `last message is a result of tool ${JSON.stringify(short(want))}`,
        holds: (v) => v.lastIsToolResult && v.lastToolName === want,
      });
  }
  if (match.turn !== undefined) {
    const turn = match.turn;
    conditions.push({ words: `turn is ${turn}`, holds: (v) => v.turn === turn });
  }
  const regexWords = regex && match.regex !== undefined ? `last user message matches /${short(match.regex)}/${match.ignore_case ? "i" : ""}` : "";
  const summary = [regexWords, ...conditions.map((c) => c.words)].filter(Boolean).join(", ") || "any request";
  return {
    regex,
    summary,
    test(view) {
      for (const c of conditions) if (!c.holds(view)) return null;
      if (!regex) return [];
      return regex.exec(view.lastUser);
    },
    failing(view) {
      const out = conditions.filter((c) => !c.holds(view)).map((c) => c.words);
      if (regex && !regex.test(view.lastUser)) out.unshift(regexWords);
      return out;
    },
  };
}
