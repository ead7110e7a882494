import type { ServerResponse } from "node:http";
import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import type { CallLog } from "../engine/call-log.js";
import { responseIdOf } from "../shared/call-ids.js";
import { codeName } from "../shared/status-code.js";
import { ranCallFields, refusedOutcome } from "../log/call-record.js";
import type { Dialect, DialectStream } from "./dialect.js";
import type { BodyDigest, DroppedRequests } from "./dropped-requests.js";
import { sseHeaders } from "./dialect.js";
import type { HttpRequestLog } from "./http-log.js";
import { createdOf } from "./openai-wire.js";
import { createPacedWriter } from "../engine/paced-writer.js";
import { responseSink, sendError, sendJson, setAnswerHeader, writeHead } from "./send.js";
import { episodeHeader } from "../shared/header-names.js";
import { heavyRequestBytes, heavyTurn, inWriteTurns, messageChars } from "../shared/heavy-turns.js";
import { LazyAbort } from "../shared/lazy-abort.js";

/** Who a model call over HTTP is for: session and step from the x-modelstub-* headers. */
export interface CallTarget {
  session: string;
  step: string;
  /** The request body and the SDK's retry count, to tell a retry of a dropped call (see DroppedRequests). */
  drops?: { tracker: DroppedRequests; body: BodyDigest; retryCount: number } | undefined;
  /** The server's --openrouter-comments: streams begin with OpenRouter's keep-alive comment line. */
  processingComments?: boolean | undefined;
}

/** A request a dialect has read: the engine's GenerateRequest, and whether to stream. */
export interface DialectCall {
  request: GenerateRequest;
  stream: boolean;
}

/**
 * Ends the link abruptly: the script's "link that dies". The socket is ended after what was
 * written is flushed, so the client sees every chunk sent before the break, then a body that
 * stops without its terminating chunk (no `[DONE]`), or no answer at all.
 *
 * What was written may not have reached the socket yet: `res.write()` corks until the next
 * tick. Node 20 corks the socket, which end() flushes; Node 24 corks the response, which holds
 * a chunked body's writes (and the head before them) in its own buffer that `socket.end()`
 * knows nothing of, so the FIN went alone and the client saw no answer at all. The response is
 * uncorked first, as many times as it says it is corked: that hands its buffer to the socket,
 * and end() sends it before the FIN.
 */
export function dropLink(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) {
    res.destroy();
    return;
  }
  for (let n = res.writableCorked; n > 0; n--) res.uncork();
  socket.end();
}

/** The log fields of a model request answered before it ran. */
export function refused(code: number, message: string): Partial<HttpRequestLog> {
  return { outcome: refusedOutcome, code: codeName(code), message };
}

/**
 * Runs one model call on the stub and answers it in `dialect`, unary or as server-sent events.
 * Resolves with the log fields once the answer has ended; never rejects.
 *
 * A stream sends its 200 and headers with the first frame, so a call that fails before any
 * frame still answers with a proper HTTP error status.
 */
export async function answerCall(stub: Stub, res: ServerResponse, call: DialectCall, target: CallTarget, dialect: Dialect): Promise<Partial<HttpRequestLog>> {
  const { request, stream } = call;
  // Reading and parsing a body of MBs took one heavy turn (route.ts); running its call takes
  // another, so that no turn holds the loop for both. A client gone meanwhile runs nothing.
  if (messageChars(request) >= heavyRequestBytes) {
    await heavyTurn();
    if (res.socket?.destroyed ?? res.destroyed) return { status: 499 };
  }
  const drops = target.drops;
  // HTTP has no deadline header: only the client going away cuts a call off. The signal is
  // made when the engine first asks for it (a call that never waits never does): an
  // AbortController per request showed up in profiles of the HTTP front.
  const cut = new LazyAbort();
  const onClose = () => {
    if (!res.writableFinished) cut.abort("cancelled");
  };
  res.on("close", onClose);
  // Back-pressure: a client that stops reading holds the call, not the server's memory; a large
  // reply is written a slice per turn of the loop (inWriteTurns).
  const events = createPacedWriter(inWriteTurns(responseSink(res)));
  let created = createdOf(0);
  let writer: DialectStream | undefined;
  let log: CallLog | undefined;
  const result = await stub
    .call({
      session: target.session,
      method: stream ? "stream" : "generate",
      request,
      stepFromMetadata: target.step || undefined,
      // A malformed step id is refused by the engine, in no episode, naming the header.
      stepCarrier: "header",
      retryOfDrop: drops?.tracker.isRetryOfDrop(target.session, drops.body, drops.retryCount),
      get signal() {
        return cut.signal;
      },
      budgetMs: Infinity,
      onStart: (s) => {
        created = createdOf(s.startMs);
        if (s.episode !== undefined) setAnswerHeader(res, episodeHeader, s.episode);
      },
      onLog: (l) => {
        log = l;
      },
      onFrame: (frame) => {
        if (res.destroyed) return;
        if (!writer) {
          writer = dialect.stream(created);
          writeHead(res, 200, [...sseHeaders, ...(dialect.headers?.(frame.id) ?? [])].flat());
        }
        return events.write(writer.frame(frame));
      },
    })
    .finally(() => res.off("close", onClose));
  // No call log: the stub refused the call before running it (draining, a cap), and it is in
  // no episode; the log line still says who was refused and why.
  const fields: Partial<HttpRequestLog> = log ? ranCallFields(log) : result.kind === "status" ? refused(result.status.code, result.status.message) : {};
  try {
    // The engine hands over the final frame without waiting on it: its events (the Responses
    // API's repeat the whole reply) go as the reader takes them, before the answer ends.
    await events.flushed();
    if (res.destroyed && result.kind !== "drop") return { ...fields, status: 499 };
    switch (result.kind) {
      case "ok":
        if (stream) {
          res.end(writer ? writer.end() : "");
        } else {
          sendJson(res, 200, dialect.unaryBody(result.response, created), dialect.headers?.(result.response.id));
        }
        return { ...fields, status: 200 };
      case "status": {
        // A call that ran has its response id, which names its error answer as it would its reply.
        const id = log ? responseIdOf(log.session, log.sequence) : undefined;
        const answer = dialect.errorOf(result.status, id);
        if (res.headersSent) {
          // Mid-stream the status line is long gone: the dialect's error event, then the end of
          // the body without its closing event. The official SDKs throw an APIError on it.
          if (writer) {
            events.write(writer.error(answer))?.catch(() => {});
            await events.flushed();
          }
          res.end();
          return { ...fields, status: 200 };
        }
        sendError(res, id === undefined ? answer : { ...answer, headers: [...answer.headers, ...(dialect.headers?.(id) ?? [])] });
        return { ...fields, status: answer.status };
      }
      case "drop":
        drops?.tracker.dropped(target.session, drops.body);
        dropLink(res);
        return { ...fields, status: 0 };
      case "aborted":
        return { ...fields, status: 499 };
    }
  } catch {
    // A dialect failed to make an event (a bug): the body is cut off rather than ended as if whole.
    res.destroy();
    return { ...fields, status: 500 };
  } finally {
    events.release();
  }
}
