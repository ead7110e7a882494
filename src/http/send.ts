import type { ServerResponse } from "node:http";
import type { PaceSink } from "../engine/paced-writer.js";
import type { HttpError } from "./http-error.js";

/**
 * Headers every answer of a response carries, whatever writes its head: x-modelstub-instance
 * and x-modelstub-episode (start-http-server.ts, answer-call.ts). Kept here and written with the
 * head in one writeHead: headers given to res.setHeader() first send every writeHead() down
 * Node's slow path, which merges the two lists header by header.
 */
const answerHeaders = new WeakMap<ServerResponse, Map<string, string>>();

/** Sets (or replaces) one of the headers every answer of `res` carries; no effect once the head is sent. */
export function setAnswerHeader(res: ServerResponse, name: string, value: string): void {
  let headers = answerHeaders.get(res);
  if (!headers) answerHeaders.set(res, (headers = new Map()));
  headers.set(name, value);
}

/** Writes the head: the answer headers first, then `headers` (flat name, value pairs). */
export function writeHead(res: ServerResponse, status: number, headers: string[]): void {
  const answer = answerHeaders.get(res);
  if (!answer) return void res.writeHead(status, headers);
  const all: string[] = [];
  for (const [k, v] of answer) all.push(k, v);
  res.writeHead(status, all.concat(headers));
}

/** Sends a whole JSON answer with its length; a response whose client has gone is left alone. */
export function sendJson(res: ServerResponse, status: number, body: object, headers: readonly (readonly [string, string])[] = []): void {
  if (res.destroyed || res.headersSent) return;
  const text = Buffer.from(JSON.stringify(body), "utf8");
  const all: string[] = ["content-type", "application/json", "content-length", String(text.length)];
  for (const [k, v] of headers) all.push(k, v);
  writeHead(res, status, all);
  res.end(text);
}

/** Sends an error in OpenAI's shape, with its headers (retry hints, scripted trailers). */
export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, error.body, error.headers);
}

/**
 * How many bytes of events a streamed answer holds unsent before its next piece waits: as many
 * as a gRPC stream (maxUnwrittenBytes). At Node's own high-water mark (16 KiB) every 16 KiB cost
 * a round of cork, write, 'drain' and resume: 60 of them for a 960 KB echo and 300 for its
 * Responses stream, which repeats the text four times (docs/performance.md, "Streaming costs
 * what unary costs").
 */
export const sseBufferBytes = 64 * 1024;

/**
 * The response of a streamed answer (server-sent events) as the paced writer's sink.
 * `res.write()` takes every piece it is given; once the response holds sseBufferBytes unsent
 * (it has said false from its own high-water mark on, so 'drain' will come), the writer waits
 * for 'drain', or for 'close' (the client went away). So a client that stops reading holds at
 * most sseBufferBytes plus the piece that crossed it here; the rest waits unrendered, in the
 * engine or in the dialect's generators.
 */
export function responseSink(res: ServerResponse): PaceSink<string> {
  return {
    put: (piece) => res.write(piece) || res.writableLength < sseBufferBytes,
    onRoom(resume) {
      const settle = () => {
        res.off("drain", settle);
        res.off("close", settle);
        resume();
      };
      res.on("drain", settle);
      res.on("close", settle);
      return () => {
        res.off("drain", settle);
        res.off("close", settle);
      };
    },
    gone: () => res.destroyed,
  };
}
