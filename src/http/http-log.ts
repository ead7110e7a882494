import type { CallRecord } from "../log/call-record.js";
import { clipText } from "../shared/clip-text.js";

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
  /** The answering entry's `name:`, when the script gives one. */
  entryName?: string | undefined;
  /** The model the request names (model calls the engine ran). */
  model?: string | undefined;
  /** The request's last user message, whole; lines quote its first 60 characters. */
  lastUser?: string | undefined;
  /** The call's sequence in its session's episode, as gRPC lines give it; absent when it ran no call. */
  sequence?: number | undefined;
  /**
   * The engine's outcome name (OK, ERROR, STREAM_BROKEN, ...); REFUSED for a chat request
   * answered before it ran (unreadable, a bad session name or step id, draining, a cap), so in
   * no episode; "" for requests that are not model calls.
   */
  outcome: string;
  /** The status code name the call ended with, as on the gRPC side (OK, RESOURCE_EXHAUSTED, ...); absent for requests that are not model calls. */
  code?: string | undefined;
  /** Why a refused request was refused. */
  message?: string | undefined;
  /** Declared (never measured) latency of the call, in ms. */
  declaredMs: number;
}

/** One stderr line per request, `key=value` after the request line so it greps and parses easily. */
export function formatHttpLog(r: HttpRequestLog): string {
  const parts = [`modelstub: http ${r.method} ${r.path} ${r.status === 0 ? "reset" : r.status}`, `session=${r.session}`];
  if (r.step) parts.push(`step=${r.step}`);
  if (r.entry) parts.push(`entry=${r.entry}`);
  if (r.entryName) parts.push(`entry_name=${JSON.stringify(r.entryName)}`);
  if (r.sequence !== undefined) parts.push(`sequence=${r.sequence}`);
  if (r.model) parts.push(`model=${JSON.stringify(r.model)}`);
  if (r.lastUser) parts.push(`last_user=${JSON.stringify(clipText(r.lastUser))}`);
  if (r.outcome) parts.push(`outcome=${r.outcome}`, `declared=${r.declaredMs}ms`);
  if (r.code) parts.push(`code=${r.code}`);
  if (r.message) parts.push(`message=${JSON.stringify(r.message)}`);
  return parts.join(" ");
}

/** The request as the server's log records it, in the same shape as a gRPC call's. */
export function callRecordOf(r: HttpRequestLog): CallRecord {
  return {
    transport: "http",
    method: `${r.method} ${r.path}`,
    status: r.status,
    session: r.session,
    step: r.step,
    entry: r.entry,
    entryName: r.entryName,
    sequence: r.sequence,
    model: r.model,
    lastUser: r.lastUser,
    outcome: r.outcome,
    code: r.code,
    declaredMs: r.declaredMs,
    message: r.message,
  };
}

/** The default HTTP logger: one line on stderr. */
export function writeHttpLog(r: HttpRequestLog): void {
  process.stderr.write(`${formatHttpLog(r)}\n`);
}
