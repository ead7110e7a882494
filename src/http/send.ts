import type { ServerResponse } from "node:http";
import type { HttpError } from "./http-error.js";

/** Sends a whole JSON answer with its length; a response whose client has gone is left alone. */
export function sendJson(res: ServerResponse, status: number, body: object, headers: readonly (readonly [string, string])[] = []): void {
  if (res.destroyed || res.headersSent) return;
  const text = Buffer.from(JSON.stringify(body), "utf8");
  const all: string[] = ["content-type", "application/json", "content-length", String(text.length)];
  for (const [k, v] of headers) all.push(k, v);
  res.writeHead(status, all);
  res.end(text);
}

/** Sends an error in OpenAI's shape, with its headers (retry hints, scripted trailers). */
export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, error.body, error.headers);
}
