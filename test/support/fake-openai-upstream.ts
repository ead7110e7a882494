import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One answer of the fake upstream, in the order requests arrive. */
export type FakeAnswer =
  | { kind: "json"; message: Record<string, unknown>; finish: string; usage?: { prompt_tokens: number; completion_tokens: number }; model?: string }
  | { kind: "sse"; deltas: Record<string, unknown>[]; finish: string; usage?: { prompt_tokens: number; completion_tokens: number }; model?: string }
  | { kind: "error"; status: number; message: string; headers?: Record<string, string> }
  /** Streams these text deltas, then resets the connection. */
  | { kind: "sse-break"; deltas: string[] }
  /** Never answers (a timeout upstream); the connection is closed when the server closes. */
  | { kind: "silent" };

/** A request the fake upstream received: its headers and parsed body. */
export interface Received {
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/** A small OpenAI-compatible chat-completions server on 127.0.0.1, answering from a list. */
export interface FakeUpstream {
  /** `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  received: Received[];
  close(): Promise<void>;
}

function answer(a: FakeAnswer, res: ServerResponse, n: number): void {
  const id = `chatcmpl-up-${n}`;
  switch (a.kind) {
    case "json":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created: 1,
          model: a.model ?? "upstream-model",
          choices: [{ index: 0, message: { role: "assistant", ...a.message }, finish_reason: a.finish }],
          usage: a.usage,
        }),
      );
      return;
    case "sse": {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (choices: unknown[], extra: object = {}) =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: a.model ?? "upstream-model", choices, ...extra })}\n\n`;
      res.write(chunk([{ index: 0, delta: { role: "assistant" }, finish_reason: null }]));
      for (const d of a.deltas) res.write(chunk([{ index: 0, delta: d, finish_reason: null }]));
      res.write(chunk([{ index: 0, delta: {}, finish_reason: a.finish }]));
      if (a.usage) res.write(chunk([], { usage: { ...a.usage, total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens } }));
      res.end("data: [DONE]\n\n");
      return;
    }
    case "error":
      res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
      res.end(JSON.stringify({ error: { message: a.message, type: "error", code: null } }));
      return;
    case "sse-break":
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const d of a.deltas)
        res.write(
          `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "upstream-model", choices: [{ index: 0, delta: { content: d }, finish_reason: null }] })}\n\n`,
        );
      // Flushed first, so the client has the deltas before the reset. Node 24 corks the response
      // itself (its buffer is not the socket's), so it is uncorked before the socket ends, as
      // src/http/answer-call.ts's dropLink does; else the FIN went out before the deltas.
      for (let n = res.writableCorked; n > 0; n--) res.uncork();
      res.socket?.end(() => res.socket?.destroy());
      return;
    case "silent":
      return;
  }
}

/** Starts the fake upstream; each request takes the next answer (a request past the list gets 500). */
export async function startFakeUpstream(answers: FakeAnswer[]): Promise<FakeUpstream> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString("utf8")));
    req.on("end", () => {
      received.push({ headers: req.headers, body: JSON.parse(body || "{}") as Record<string, unknown> });
      const a = answers[received.length - 1];
      if (!a || req.url !== "/v1/chat/completions")
        answer({ kind: "error", status: 500, message: `fake upstream: no answer for request ${received.length} to ${req.url}` }, res, received.length);
      else answer(a, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
