import type { CallRecord } from "../log/call-record.js";
import { clipText } from "../shared/clip-text.js";

/**
 * What the HTTP front reports about one request, once it has ended: the log's record of a call
 * (log/call-record.ts, where each field says what it holds), with the request line's method and
 * path apart and the HTTP status always given. REFUSED is the outcome of a model request
 * answered before it ran (unreadable, a bad session name or step id, draining, a cap); "" that
 * of a request that is not a model call.
 */
export interface HttpRequestLog extends Omit<CallRecord, "transport" | "method" | "status"> {
  /** The request line's method. */
  method: string;
  /** Path without the query. */
  path: string;
  /** The HTTP status sent; 499 when the client went away first, 0 when the script dropped the link. */
  status: number;
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
  const { method, path, ...rest } = r;
  return { ...rest, transport: "http", method: `${method} ${path}` };
}

/** The default HTTP logger: one line on stderr. */
export function writeHttpLog(r: HttpRequestLog): void {
  process.stderr.write(`${formatHttpLog(r)}\n`);
}
