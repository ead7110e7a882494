import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";

/** A reply the upstream gave, as the recorder keeps it. */
export interface UpstreamReply {
  text: string;
  /** The text as the upstream's stream cut it (a unary reply: the text, whole). */
  chunks: string[];
  /** Tool calls with the upstream's own ids. */
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: "stop" | "length" | "tool_calls" | "content_filter";
  /** The upstream's counts, when it gave them. */
  usage: { input: number; output: number } | undefined;
  /** The model the upstream says answered. */
  model: string;
}

/**
 * A stream the upstream cut short: after how many of its deltas, and how it ended: a status
 * (`error`, the default, with its code, default UNAVAILABLE), a stall the client's deadline or
 * cancel ended (`hang`), or a link reset under the call (`drop`).
 */
export interface UpstreamBreak {
  afterChunks: number;
  then?: "error" | "hang" | "drop";
  message: string;
  code?: number;
  trailers?: [string, string][];
}

/** How an upstream call ended; times are measured, in whole ms from sending the request. */
export type UpstreamResult =
  | { kind: "reply"; reply: UpstreamReply; firstByteMs: number; totalMs: number; broke?: UpstreamBreak }
  | { kind: "error"; code: number; message: string; trailers: [string, string][]; httpStatus?: number; totalMs: number }
  | { kind: "timeout"; totalMs: number }
  /** The client went away (its deadline or cancel) before the upstream answered. */
  | { kind: "aborted"; reason: "deadline" | "cancelled"; totalMs: number };

/** One upstream call: the request (tool call ids already the upstream's), streamed or not. */
export interface UpstreamCall {
  method: "generate" | "stream";
  request: GenerateRequest;
  /** The client's session and step (from the request or its metadata), for an upstream that reads them. */
  session: string;
  step: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** The client's deadline, in ms from now (Infinity for none): an upstream that takes deadlines gets it. */
  budgetMs: number;
}

/** A real model endpoint the recorder forwards to. */
export interface Upstream {
  /** Where it is, for comments and messages (never with credentials). */
  readonly describe: string;
  call(call: UpstreamCall): Promise<UpstreamResult>;
  close(): void;
}

/** Options every upstream takes. */
export interface UpstreamOptions {
  /** Sent as `authorization: Bearer KEY` upstream only; never recorded or logged. */
  apiKey?: string | undefined;
  /** The model to send when a request names none. */
  model?: string | undefined;
  /**
   * --upstream-timeout (default 60 s): a unary call not answered in full by then ends as a
   * timeout; a stream may take no longer than this for its first byte, nor between two reads.
   */
  timeoutMs?: number | undefined;
}

/** Milliseconds since `t0`, whole. */
export const msSince = (t0: number) => Math.max(0, Math.round(performance.now() - t0));

/**
 * The limit --upstream-timeout sets on one upstream call: its signal aborts `ms` after the last
 * touch() (or the start). A unary call never touches it, so it bounds the whole call; a stream
 * touches it on every read, so only silence is bounded: a long answer that keeps making
 * progress is recorded whole, where a bound on the whole stream would throw its text away.
 */
export function idleLimit(ms: number): { signal: AbortSignal; touch(): void; stop(): void } {
  const controller = new AbortController();
  // One timer, restarted in place on every read (refresh), rather than a new one per read.
  const timer = setTimeout(() => controller.abort("upstream-timeout"), ms);
  return {
    signal: controller.signal,
    touch: () => void (controller.signal.aborted || timer.refresh()),
    stop: () => clearTimeout(timer),
  };
}

/** The status message of a stream the upstream left silent for longer than --upstream-timeout. */
export const stalledMessage = (ms: number) => `upstream stalled for more than ${ms} ms`;
