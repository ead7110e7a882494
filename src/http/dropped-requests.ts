import { createHash } from "node:crypto";

/** Sessions remembered at most: the oldest is forgotten first, so a long run holds little. */
const maxSessions = 1024;

/**
 * The last request the script dropped, per session, by a digest of its body: a client library
 * that retries a dead connection (the OpenAI and Anthropic SDKs do, sending
 * `x-stainless-retry-count: N`) sends the same body again, and the engine then drops that retry
 * too when no entry answers it (CallInput.retryOfDrop), instead of a 404 "no entry matches".
 * Only digests are kept; a body is hashed only when its call was dropped or it is a retry.
 */
export class DroppedRequests {
  private readonly last = new Map<string, string>();

  /** Remembers that `session`'s request with this body was dropped. */
  dropped(session: string, body: BodyDigest): void {
    this.last.delete(session);
    this.last.set(session, body());
    if (this.last.size > maxSessions) this.last.delete(this.last.keys().next().value!);
  }

  /**
   * Whether a request is a library's retry (retry count ≥ 1) of the session's last dropped
   * request. A request that is no retry starts something new: the drop is forgotten, so a later
   * retry of the same body (after a 503, say) is answered as any call.
   */
  isRetryOfDrop(session: string, body: BodyDigest, retryCount: number): boolean {
    if (retryCount < 1) {
      this.last.delete(session);
      return false;
    }
    const d = this.last.get(session);
    return d !== undefined && d === body();
  }
}

/** A request body's digest, computed when first asked for. */
export type BodyDigest = () => string;

/**
 * A body's digest (SHA-256 of its bytes, base64): `known` when it was hashed as it was read (a
 * body of more than 64 KiB: read-body.ts), else `later`, hashed when first asked for (most calls
 * never ask), the chunks held by the call until then. Each closure is made in a function of its
 * own: closures made in one function share its scope, and a hashed digest's closure once kept the
 * whole body (4.7 MB of a 960 KB echo of control characters, escaped) alive for as long as its
 * call waited on a stalled reader.
 */
export const bodyDigest = {
  known(digest: string): BodyDigest {
    return () => digest;
  },
  later(chunks: readonly Buffer[]): BodyDigest {
    let d: string | undefined;
    return () => {
      if (d === undefined) {
        const h = createHash("sha256");
        for (const c of chunks) h.update(c);
        d = h.digest("base64");
      }
      return d;
    };
  },
};

/** The retry count a Stainless-generated SDK sends (`x-stainless-retry-count`); 0 when absent or not a number. */
export function retryCountOf(header: string): number {
  return /^\d{1,4}$/.test(header) ? Number(header) : 0;
}
