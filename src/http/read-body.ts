import type { IncomingMessage } from "node:http";
import { createHash, type Hash } from "node:crypto";
import { heavyRequestBytes, heavyTurn, readTurnSpent } from "../shared/heavy-turns.js";
import { bodyDigest, type BodyDigest } from "./dropped-requests.js";

/** A request body as read: its chunks as they came, and the digest of its bytes (dropped-requests.ts). */
export interface ReadBody {
  chunks: Buffer[];
  size: number;
  digest: BodyDigest;
}

/** Bodies larger than this are hashed as they are read: a call that waits then holds no second copy. */
const hashAsReadBytes = 65_536;

/**
 * Reads the body; "too large" past the limit (reading stops there), undefined when the client
 * went away. Listeners, not `for await`: the async iterator cost a promise and a generator step
 * per chunk, about 5% of a request's CPU in the bench profile, and most bodies are one chunk.
 *
 * A large body is read in turns (readTurnSpent): once the loop's turn has read its share, the
 * body pauses (its socket stops being read) until a heavy turn, so that many large bodies
 * arriving together do not hold one poll phase. It is hashed a chunk at a time as it comes, not
 * in one go once whole (12-15 ms of SHA-256 for a 5.8 MB body, in the turn that decodes it).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<ReadBody | "too large" | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let hash: Hash | undefined;
    let done = false;
    const finish = (value: ReadBody | "too large" | undefined) => {
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
      resolve(value);
    };
    const resume = () => {
      if (!done) req.resume();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Nothing more is read: the 413 goes out with `connection: close`, and Node closes the
        // socket behind it, unread bytes and all.
        req.pause();
        finish("too large");
        return;
      }
      chunks.push(chunk);
      if (hash) hash.update(chunk);
      else if (size > hashAsReadBytes) {
        hash = createHash("sha256");
        for (const c of chunks) hash.update(c);
      }
      if (readTurnSpent(chunk.length) && size >= heavyRequestBytes) {
        req.pause();
        heavyTurn().then(resume, resume);
      }
    };
    // The chunks as they came: joining and decoding MBs waits for the request's heavy turn.
    const onEnd = () => finish({ chunks, size, digest: hash ? bodyDigest.known(hash.digest("base64")) : bodyDigest.later(chunks) });
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
