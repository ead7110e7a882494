import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether a token a caller gave is the expected one, in constant time: a token check must not
 * tell by its timing how much was right, nor how long the token is (both sides are hashed to the
 * same length first). Shared by ControlService and the HTTP front.
 */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
