import { maxIssueChars, maxIssuesShown, maxScriptErrorBytes } from "./script-limits.js";

/** One problem found in a script, located so a person can go straight to it. */
export interface ScriptIssue {
  /** The file (or source name) the script came from. */
  file: string;
  /** 1-based line and column of the offending node; 0 when the file is empty. */
  line: number;
  column: number;
  /** The field path, like `steps.plan[2].reply`; "" for the whole script. */
  path: string;
  /** What was wrong, as a sentence fragment: `expected a text, got a number`. */
  message: string;
  /** How to fix it, when there is something better to say than the message. */
  hint?: string;
}

/**
 * Cuts a line longer than `max` characters out of its middle, saying how much went: the start
 * says where and what, the end holds the hint. A key of 20,000 characters stays one readable line.
 */
function clip(line: string, max: number): string {
  if (line.length <= max) return line;
  const note = (cut: number) => ` [... ${cut} characters cut ...] `;
  const keep = max - note(line.length).length;
  const head = Math.ceil((keep * 2) / 3);
  const tail = keep - head;
  return `${line.slice(0, head)}${note(line.length - keep)}${line.slice(line.length - tail)}`;
}

// Control characters and lone surrogates (from a binary file, or a key like "\uD800") are shown
// escaped: a line stays one printable line, and a gRPC status can carry it (grpc-js
// percent-encodes the message with encodeURI, which throws on a lone surrogate).
const unprintable = /[\x00-\x1f\x7f-\x9f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const printable = (s: string) => s.replace(unprintable, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);

/** Renders one issue as the single line a user sees (at most maxIssueChars characters). */
export function formatIssue(issue: ScriptIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  const field = issue.path ? `${issue.path}: ` : "";
  const hint = issue.hint ? ` (hint: ${issue.hint})` : "";
  return clip(printable(`${where}: ${field}${issue.message}${hint}`), maxIssueChars);
}

const prefix = "cannot load script ";
/** A text's size as a gRPC status message goes on the wire (lines are printable: encodeURI cannot throw). */
const wireBytes = (s: string) => encodeURI(s).length;

/**
 * The lines a script error shows: the first maxIssuesShown issues, as many as fit in
 * maxScriptErrorBytes together (measured as a gRPC status carries them), then one line counting
 * the rest. A script with 40,000 mistakes
 * gets a message a terminal, a log and a gRPC status can all carry.
 */
export function formatIssues(issues: readonly ScriptIssue[]): string[] {
  const lines: string[] = [];
  // Room for the prefix (a fault plan's is 4 bytes longer), the newlines and the closing count line.
  let budget = maxScriptErrorBytes - wireBytes(prefix) - 150;
  for (const issue of issues.slice(0, maxIssuesShown)) {
    const line = formatIssue(issue);
    const cost = wireBytes(line) + 3;
    if (cost > budget) break;
    budget -= cost;
    lines.push(line);
  }
  const rest = issues.length - lines.length;
  if (rest > 0) {
    const cap = lines.length < Math.min(issues.length, maxIssuesShown) ? `, to keep the message under ${maxScriptErrorBytes / 1024} KiB` : "";
    lines.push(`... and ${rest} more problem${rest === 1 ? "" : "s"} (first ${lines.length} shown${cap})`);
  }
  return lines;
}

/**
 * A script that cannot be served. One error class with a stable code, in nock's manner: callers
 * branch on `code`, people read `message`, tools read `issues` (every one, uncapped). `lines` is
 * what a person sees, capped (formatIssues): `modelstub validate` prints them, and the message
 * (what `serve` and LoadScript show) is them after "cannot load script " (a fault plan's:
 * "cannot load fault plan ", read by the same loader: `what`).
 */
export class ScriptError extends Error {
  readonly code = "ERR_MODELSTUB_SCRIPT";
  readonly lines: readonly string[];
  constructor(
    readonly issues: readonly ScriptIssue[],
    readonly what: "script" | "fault plan" = "script",
    /**
     * True when the text was refused for what compiling it cost (its time or memory budget,
     * script-compiler.ts), not for a mistake in it: ControlService answers RESOURCE_EXHAUSTED.
     */
    readonly exhausted = false,
  ) {
    const lines = formatIssues(issues);
    super(`cannot load ${what} ${lines.length > 0 ? lines.join("\n") : "(no details)"}`);
    this.lines = lines;
    this.name = "ScriptError";
  }
}
