import { clipText } from "../shared/clip-text.js";
import type { CallRecord } from "./call-record.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "json" | "text";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where log lines go: stderr in production, a buffer in tests. */
export interface LogSink {
  write(chunk: string): unknown;
}

/**
 * The server's log: one line per call on stderr, as a container's log is read. A call only
 * queues its record: formatting (JSON.stringify) and the write happen once per event-loop turn,
 * after the call has answered, so a call never waits on either; a level below the threshold
 * costs one comparison. Fields are read when the line is formatted: pass a fresh object.
 */
export interface Logger {
  /** A finished call or HTTP request, refused ones included (outcome REFUSED), from either transport. */
  call(record: CallRecord): void;
  /** What the server is doing, for debugging (--log-level debug). */
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Writes what is queued now (shutdown). */
  flush(): void;
}

function textFields(fields: Record<string, unknown>): string {
  let out = "";
  for (const [k, v] of Object.entries(fields)) {
    if (v === "" || v === undefined) continue;
    const s = typeof v === "string" ? v : JSON.stringify(v);
    out += ` ${k}=${/[\s"=]/.test(s) ? JSON.stringify(s) : s}`;
  }
  return out;
}

type Level = Exclude<LogLevel, "silent">;

/**
 * A call's line fields, in a fixed order on both transports; a field the record leaves
 * undefined is left out (JSON.stringify drops it, the text format skips it). Fields are read
 * when the line is formatted, after the call has answered.
 */
function callFields(r: CallRecord): Record<string, unknown> {
  return {
    transport: r.transport,
    method: r.method,
    status: r.status,
    session: r.session,
    step: r.step,
    entry: r.entry,
    entry_name: r.entryName,
    sequence: r.sequence,
    model: r.model,
    // "" (no user message) is left out like an undefined field in the text format, kept in JSON.
    last_user: r.lastUser === undefined ? undefined : clipText(r.lastUser),
    outcome: r.outcome,
    code: r.code,
    declared_ms: r.declaredMs,
    message: r.message,
  };
}

const json = JSON.stringify;

/**
 * A call's JSON line: exactly `JSON.stringify({ level: "info", msg: "call", ...callFields(r) })`
 * (a test pins it), written key by key from callFields, so the order lives in one place, without
 * spreading a second object per call on a server logging thousands of calls a second.
 */
function callJson(r: CallRecord): string {
  const fields = callFields(r);
  let s = '{"level":"info","msg":"call"';
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) s += `,${json(key)}:${json(value)}`;
  }
  return `${s}}`;
}

/** A line waiting for the end of the event-loop turn, not yet formatted: fields, or a call's record. */
type Queued =
  | { level: Level; msg: string; fields: Record<string, unknown>; call?: undefined }
  | { level: "info"; msg: "call"; fields?: undefined; call: CallRecord };

/** Creates a logger writing `format` lines at `level` and above to `sink`. */
export function createLogger(options: { level?: LogLevel; format?: LogFormat; sink?: LogSink } = {}): Logger {
  const threshold = rank[options.level ?? "info"];
  const format = options.format ?? "json";
  const sink = options.sink ?? process.stderr;
  // Log lines carry no timestamp: the container runtime stamps stderr, and a line that is
  // the same in every run is easier to diff.
  const line = ({ level, msg, fields, call }: Queued): string => {
    try {
      if (call) return format === "json" ? `${callJson(call)}\n` : `modelstub info: call${textFields(callFields(call))}\n`;
      return format === "json" ? `${JSON.stringify({ level, msg, ...fields })}\n` : `modelstub ${level}: ${msg}${textFields(fields)}\n`;
    } catch (err) {
      // Formatting runs after the call that logged has returned: a field JSON cannot carry
      // (a BigInt, a cycle) must cost that line, never the process.
      return format === "json"
        ? `${JSON.stringify({ level: "error", msg: "cannot format a log line", line: msg, error: (err as Error).message })}\n`
        : `modelstub error: cannot format a log line line=${JSON.stringify(msg)}\n`;
    }
  };
  let queue: Queued[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const lines = queue;
    queue = [];
    let text = "";
    for (const q of lines) text += line(q);
    sink.write(text);
  };
  const emit = (queued: Queued) => {
    queue.push(queued);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush).unref();
    }
  };
  const at =
    (level: Level) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (rank[level] >= threshold) emit({ level, msg: message, fields });
    };
  return {
    call(record) {
      if (rank.info < threshold) return;
      emit({ level: "info", msg: "call", call: record });
    },
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    flush,
  };
}
