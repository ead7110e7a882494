/**
 * Unsigned 32-bit varints, for the hand-written protobuf encoders (the episode call's, the
 * stream frame's), which size a message first and then write it into one buffer.
 */

/** How many bytes `n` (an unsigned 32-bit integer) takes as a varint: 1 to 5. */
export function varintSize(n: number): number {
  // Unrolled: called for every tag and length prefix of a message, twice (size, then write).
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  return 5;
}

/** Writes `n` (an unsigned 32-bit integer) as a varint at `at`; returns the position after it. */
export function writeVarint(buf: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at++] = n;
  return at;
}
