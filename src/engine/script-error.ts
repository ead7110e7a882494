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

/** Renders one issue as the single line a user sees. */
export function formatIssue(issue: ScriptIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  const field = issue.path ? `${issue.path}: ` : "";
  const hint = issue.hint ? ` (hint: ${issue.hint})` : "";
  return `${where}: ${field}${issue.message}${hint}`;
}

/**
 * A script that cannot be served. One error class with a stable code, in nock's manner: callers
 * branch on `code`, people read `message`, tools read `issues`.
 */
export class ScriptError extends Error {
  readonly code = "ERR_MODELSTUB_SCRIPT";
  constructor(readonly issues: readonly ScriptIssue[]) {
    const first = issues[0];
    const more = issues.length > 1 ? `\n${issues.slice(1).map(formatIssue).join("\n")}` : "";
    super(`cannot load script ${first ? formatIssue(first) : "(no details)"}${more}`);
    this.name = "ScriptError";
  }
}
