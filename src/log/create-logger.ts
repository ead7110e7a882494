import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallLog } from "../engine/run-call.js";
import { codeName } from "../engine/status-code.js";
import { refusedOutcome, type HttpRequestLog } from "../http/http-log.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "json" | "text";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where log lines go: stderr in production, a buffer in tests. */
export interface LogSink {
  write(chunk: string): unknown;
}

/** A gRPC model call refused before it ran, so in no episode: draining, a cap, a bad session name or step id. */
export interface Refusal {
  session: string;
  step: string;
  code: number;
  message: string;
}

/**
 * The server's log: one line per call on stderr, as a container's log is read. A call only
 * queues its record: formatting (JSON.stringify) and the write happen once per event-loop turn,
 * after the call has answered, so a call never waits on either; a level below the threshold
 * costs one comparison. Fields are read when the line is formatted: pass a fresh object.
 */
export interface Logger {
  /** A finished gRPC model call. */
  grpcCall(method: string, log: CallLog): void;
  /** A gRPC model call refused before it ran: one line like a call's, outcome REFUSED. */
  grpcRefused(method: string, refusal: Refusal): void;
  /** A finished HTTP request. */
  http(record: HttpRequestLog): void;
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

/** A line waiting for the end of the event-loop turn, not yet formatted. */
interface Queued {
  level: Level;
  msg: string;
  fields: Record<string, unknown>;
}

/** Creates a logger writing `format` lines at `level` and above to `sink`. */
export function createLogger(options: { level?: LogLevel; format?: LogFormat; sink?: LogSink } = {}): Logger {
  const threshold = rank[options.level ?? "info"];
  const format = options.format ?? "json";
  const sink = options.sink ?? process.stderr;
  // Log lines carry no timestamp: the container runtime stamps stderr, and a line that is
  // the same in every run is easier to diff.
  const line = ({ level, msg, fields }: Queued): string => {
    try {
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
  const emit = (level: Level, msg: string, fields: Record<string, unknown>) => {
    queue.push({ level, msg, fields });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush).unref();
    }
  };
  const at = (level: Level) => (message: string, fields: Record<string, unknown> = {}) => {
    if (rank[level] >= threshold) emit(level, message, fields);
  };
  return {
    grpcCall(method, log) {
      if (rank.info < threshold) return;
      emit("info", "call", {
        transport: "grpc",
        method,
        session: log.session,
        step: log.step,
        entry: log.entry,
        sequence: log.sequence,
        outcome: Outcome[log.outcome],
        code: codeName(log.code),
        declared_ms: log.declaredMs,
      });
    },
    grpcRefused(method, r) {
      if (rank.info < threshold) return;
      // The same keys as a call's line (no sequence: none was handed out), and the reason.
      emit("info", "call", {
        transport: "grpc",
        method,
        session: r.session,
        step: r.step,
        entry: "",
        outcome: refusedOutcome,
        code: codeName(r.code),
        declared_ms: 0,
        message: r.message,
      });
    },
    http(r) {
      if (rank.info < threshold) return;
      emit("info", "call", {
        transport: "http",
        method: `${r.method} ${r.path}`,
        status: r.status,
        session: r.session,
        step: r.step,
        entry: r.entry,
        outcome: r.outcome,
        code: r.code,
        declared_ms: r.declaredMs,
        message: r.message,
      });
    },
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    flush,
  };
}
