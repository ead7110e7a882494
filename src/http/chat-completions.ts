import type { ServerResponse } from "node:http";
import type { Stub } from "../engine/create-stub.js";
import type { CallLog } from "../engine/call-log.js";
import { badRequestError, httpErrorOf } from "./http-error.js";
import { Code, codeName } from "../shared/status-code.js";
import { outcomeName, refusedOutcome } from "../log/call-record.js";
import type { HttpRequestLog } from "./http-log.js";
import { ChunkWriter, completionBody, createdOf, doneEvent, event } from "./openai-wire.js";
import { parseChatRequest } from "./parse-chat-request.js";
import { sendError, sendJson, streamWriter } from "./send.js";

/** Who a chat request is for: session and step from the x-modelstub-* headers. */
export interface ChatTarget {
  session: string;
  step: string;
}

const sseHeaders: [string, string][] = [
  ["content-type", "text/event-stream; charset=utf-8"],
  ["cache-control", "no-cache"],
];

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
function dropLink(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) {
    res.destroy();
    return;
  }
  for (let n = res.writableCorked; n > 0; n--) res.uncork();
  socket.end();
}

/** The log fields of a chat request answered before it ran. */
export function refused(code: number, message: string): Partial<HttpRequestLog> {
  return { outcome: refusedOutcome, code: codeName(code), message };
}

/**
 * `POST /v1/chat/completions`: one model call on the stub, answered as OpenAI does, unary or as
 * server-sent events. Resolves with the log fields once the answer has ended; never rejects.
 *
 * A stream sends its 200 and headers with the first frame, so a call that fails before any
 * frame still answers with a proper HTTP error status.
 */
export function chatCompletions(stub: Stub, res: ServerResponse, body: string, target: ChatTarget): Promise<Partial<HttpRequestLog>> {
  // Parsed here, so the body's text (escapes and all, up to --max-message-bytes) is not held by
  // a call that waits on a slow reader.
  let parsed: ReturnType<typeof parseChatRequest>;
  try {
    parsed = parseChatRequest(body);
  } catch (err) {
    return Promise.reject(err);
  }
  return answer(stub, res, parsed, target);
}

/** Answers a parsed chat request (see chatCompletions). */
async function answer(stub: Stub, res: ServerResponse, parsed: ReturnType<typeof parseChatRequest>, target: ChatTarget): Promise<Partial<HttpRequestLog>> {
  if ("error" in parsed) {
    sendError(res, badRequestError(parsed.error));
    return { status: 400, ...refused(Code.INVALID_ARGUMENT, parsed.error.message) };
  }
  const { request, stream, includeUsage } = parsed.value;
  // HTTP has no deadline header: only the client going away cuts a call off. The controller is
  // made when the engine first asks for the signal (a call that never waits never does): an
  // AbortController per request showed up in profiles of the HTTP front.
  let controller: AbortController | undefined;
  let gone = false;
  const onClose = () => {
    if (res.writableFinished) return;
    gone = true;
    controller?.abort("cancelled");
  };
  res.on("close", onClose);
  // Back-pressure: a client that stops reading holds the call, not the server's memory.
  const events = streamWriter(res);
  let created = createdOf(0);
  let writer: ChunkWriter | undefined;
  let log: CallLog | undefined;
  const result = await stub
    .call({
      session: target.session,
      method: stream ? "stream" : "generate",
      request,
      stepFromMetadata: target.step || undefined,
      // A malformed step id is refused by the engine, in no episode, naming the header.
      stepCarrier: "header",
      get signal() {
        if (!controller) {
          controller = new AbortController();
          if (gone) controller.abort("cancelled");
        }
        return controller.signal;
      },
      budgetMs: Infinity,
      onStart: (s) => {
        created = createdOf(s.startMs);
      },
      onLog: (l) => {
        log = l;
      },
      onFrame: (frame) => {
        if (res.destroyed) return;
        if (!writer) {
          writer = new ChunkWriter(created, includeUsage);
          res.writeHead(200, sseHeaders.flat());
        }
        return events.write(writer.frame(frame));
      },
    })
    .finally(() => {
      res.off("close", onClose);
      events.release();
    });
  // No call log: the stub refused the call before running it (draining, a cap), and it is in
  // no episode; the log line still says who was refused and why.
  const fields: Partial<HttpRequestLog> = log
    ? { entry: log.entry, sequence: log.sequence, outcome: outcomeName(log.outcome), code: codeName(log.code), declaredMs: log.declaredMs, message: log.message }
    : result.kind === "status"
      ? refused(result.status.code, result.status.message)
      : {};
  if (res.destroyed && result.kind !== "drop") return { ...fields, status: 499 };
  switch (result.kind) {
    case "ok":
      if (stream) {
        res.end(doneEvent);
      } else {
        sendJson(res, 200, completionBody(result.response, created));
      }
      return { ...fields, status: 200 };
    case "status": {
      const answer = httpErrorOf(result.status);
      if (res.headersSent) {
        // Mid-stream the status line is long gone: an error event in OpenAI's shape, then the
        // end of the body without [DONE]. The official SDKs throw an APIError on it.
        res.end(event(answer.body));
        return { ...fields, status: 200 };
      }
      sendError(res, answer);
      return { ...fields, status: answer.status };
    }
    case "drop":
      dropLink(res);
      return { ...fields, status: 0 };
    case "aborted":
      return { ...fields, status: 499 };
  }
}
