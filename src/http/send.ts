import type { ServerResponse } from "node:http";
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

/** Writes a streamed answer's events with back-pressure (see streamWriter). */
export interface StreamWriter {
  /** Writes `text`; returns a promise when the response's buffer is full (the engine's onFrame contract). */
  write(text: string): Promise<void> | undefined;
  /** Settles what waits and removes its listeners; once, when the answer ends, however it ends. */
  release(): void;
}

/**
 * A writer for a streamed answer (server-sent events). `res.write()` takes every chunk it is
 * given and says false once the response holds more than its high-water mark (16 KiB) unsent:
 * then the next event waits for 'drain', or for 'close' (the client went away). So a client that
 * stops reading holds at most the high-water mark plus the event that crossed it here; the rest
 * waits in the engine, unrendered.
 */
export function streamWriter(res: ServerResponse): StreamWriter {
  let waiting: (() => void) | undefined;
  const settle = () => {
    res.off("drain", settle);
    res.off("close", settle);
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  return {
    write(text) {
      if (res.write(text)) return undefined;
      res.on("drain", settle);
      res.on("close", settle);
      return new Promise<void>((resolve) => (waiting = resolve));
    },
    release: settle,
  };
}
