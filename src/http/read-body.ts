import type { IncomingMessage } from "node:http";

/**
 * Reads the body as UTF-8 text; "too large" past the limit (reading stops there), undefined
 * when the client went away. Listeners, not
 * `for await`: the async iterator cost a promise and a generator step per chunk, about 5% of a
 * request's CPU in the bench profile, and most bodies are one chunk.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer[] | "too large" | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: Buffer[] | "too large" | undefined) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Nothing more is read: the 413 goes out with `connection: close`, and Node closes the
        // socket behind it, unread bytes and all.
        req.pause();
        finish("too large");
      } else chunks.push(chunk);
    };
    // The chunks as they came: joining and decoding MBs waits for the request's heavy turn.
    const onEnd = () => finish(chunks);
    // 'close' before 'end': the client went away mid-body.
    const onGone = () => finish(undefined);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onGone);
    req.on("close", onGone);
  });
}

/** A body's text, from the chunks readBody gathered. */
export function textOf(chunks: Buffer[]): string {
  if (chunks.length === 0) return "";
  return (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8");
}
