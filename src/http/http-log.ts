import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";

/** What the HTTP front reports about one request, once it has ended. */
export interface HttpRequestLog {
  method: string;
  /** Path without the query. */
  path: string;
  /** The HTTP status sent; 499 when the client went away first, 0 when the script dropped the link. */
  status: number;
  session: string;
  /** Step id, "" when none. */
  step: string;
  /** The script entry that answered, like `entries[2]`; "" when none did. */
  entry: string;
  /** The engine's outcome name (OK, ERROR, STREAM_BROKEN, ...); "" for requests that are not model calls. */
  outcome: string;
  /** Declared (never measured) latency of the call, in ms. */
  declaredMs: number;
}

/** The name of an outcome, like `STREAM_BROKEN`. */
export function outcomeName(outcome: Outcome): string {
  return Outcome[outcome] ?? String(outcome);
}

/** One stderr line per request, `key=value` after the request line so it greps and parses easily. */
export function formatHttpLog(r: HttpRequestLog): string {
  const parts = [`modelstub: http ${r.method} ${r.path} ${r.status === 0 ? "reset" : r.status}`, `session=${r.session}`];
  if (r.step) parts.push(`step=${r.step}`);
  if (r.entry) parts.push(`entry=${r.entry}`);
  if (r.outcome) parts.push(`outcome=${r.outcome}`, `declared=${r.declaredMs}ms`);
  return parts.join(" ");
}

/** The default HTTP logger: one line on stderr. */
export function writeHttpLog(r: HttpRequestLog): void {
  process.stderr.write(`${formatHttpLog(r)}\n`);
}
