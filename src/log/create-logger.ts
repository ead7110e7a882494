import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallLog } from "../engine/run-call.js";
import { codeName } from "../engine/status-code.js";
import type { HttpRequestLog } from "../http/http-log.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "json" | "text";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where log lines go: stderr in production, a buffer in tests. */
export interface LogSink {
  write(chunk: string): unknown;
}

/**
 * The server's log: one line per call on stderr, as a container's log is read. Lines are
 * queued and written once per event-loop turn, so a call never waits on a write, and a level
 * below the threshold costs one comparison.
 */
export interface Logger {
  /** A finished gRPC model call. */
  grpcCall(method: string, log: CallLog): void;
  /** A finished HTTP request. */
  http(record: HttpRequestLog): void;
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

/** Creates a logger writing `format` lines at `level` and above to `sink`. */
export function createLogger(options: { level?: LogLevel; format?: LogFormat; sink?: LogSink } = {}): Logger {
  const threshold = rank[options.level ?? "info"];
  const format = options.format ?? "json";
  const sink = options.sink ?? process.stderr;
  let queue: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const text = queue.join("");
    queue = [];
    sink.write(text);
  };
  const emit = (level: Exclude<LogLevel, "silent">, msg: string, fields: Record<string, unknown>) => {
    // Log lines carry no timestamp: the container runtime stamps stderr, and a line that is
    // the same in every run is easier to diff.
    queue.push(format === "json" ? `${JSON.stringify({ level, msg, ...fields })}\n` : `modelstub ${level}: ${msg}${textFields(fields)}\n`);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush).unref();
    }
  };
  const at = (level: Exclude<LogLevel, "silent">) => (message: string, fields: Record<string, unknown> = {}) => {
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
        declared_ms: r.declaredMs,
      });
    },
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    flush,
  };
}
