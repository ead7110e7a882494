/**
 * The lengths a hand-written encoder works out while sizing a message, kept in visiting order
 * for the write that follows: each string's UTF-8 length and each nested message's length is
 * computed once, in the sizing pass, and read back in the same order when its length prefix
 * is written. One module-wide scratch array, reused by every call: the encoders are
 * synchronous, so a sizing pass and its write never interleave with another's.
 */

import { varintSize } from "./varint.js";

let lengths = new Int32Array(256);
let count = 0;
let cursor = 0;

/** Starts a sizing pass: forgets the lengths of the previous one. */
export function startSizing(): void {
  count = 0;
}

/**
 * Reserves the next slot, before the lengths of what the slotted item contains, so that the
 * write pass, which writes a nested message's prefix before its fields, finds it first.
 */
export function reserveLength(): number {
  if (count === lengths.length) {
    // Grows for a huge request (thousands of messages); kept grown for the next call.
    const grown = new Int32Array(count * 2);
    grown.set(lengths);
    lengths = grown;
  }
  return count++;
}

/**
 * Fills `slot` with a length-delimited field's payload length; returns the field's whole size
 * (a one-byte tag: every field number here is below 16, the length prefix, the payload).
 */
export function delimitedSize(slot: number, length: number): number {
  lengths[slot] = length;
  return 1 + varintSize(length) + length;
}

/** Starts the write pass of the lengths last sized. */
export function startWriting(): void {
  cursor = 0;
}

/** The next length recorded by the sizing pass, in visiting order. */
export function nextLength(): number {
  return lengths[cursor++]!;
}
