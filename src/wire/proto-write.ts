import type { UnknownField } from "@bufbuild/protobuf";
import { writeVarint } from "./varint.js";
import { nextLength } from "./proto-lengths.js";
import { uint64Bits } from "./proto-size.js";

/**
 * Writers of protobuf fields into a buffer sized beforehand (proto-size.ts), byte for byte as
 * protobuf-es's toBinary writes them. Each takes the field's tag (one byte: field numbers below
 * 16), writes at `at` and returns the position after what it wrote; none checks room: the
 * sizing pass made it, and validated the values.
 */

/** ASCII strings up to this length are copied by a loop, cheaper than a call into Buffer. */
const LOOP_COPY_UP_TO = 32;

/** A string field: skipped when empty, as stringSize left it out; else tag, length, UTF-8. */
export function writeString(buf: Buffer, at: number, tag: number, s: string): number {
  return s === "" ? at : writeListString(buf, at, tag, s);
}

/** An element of a repeated string field, empty or not. */
export function writeListString(buf: Buffer, at: number, tag: number, s: string): number {
  buf[at++] = tag;
  const n = nextLength();
  at = writeVarint(buf, at, n);
  const len = s.length;
  if (n === len) {
    // As many bytes as code units: ASCII.
    if (len <= LOOP_COPY_UP_TO) {
      for (let i = 0; i < len; i++) buf[at + i] = s.charCodeAt(i);
      return at + len;
    }
    return at + buf.write(s, at, len, "latin1");
  }
  // Node's UTF-8 writer, like TextEncoder, writes a lone surrogate as U+FFFD.
  return at + buf.write(s, at, n, "utf8");
}

/** A length-delimited field's tag and length prefix (the length the sizing pass recorded). */
export function writeDelimited(buf: Buffer, at: number, tag: number): number {
  buf[at++] = tag;
  return writeVarint(buf, at, nextLength());
}

/** A uint32 field: skipped when zero, unless `always` (explicit presence). */
export function writeUint32(buf: Buffer, at: number, tag: number, v: number, always = false): number {
  if (v === 0 && !always) return at;
  buf[at++] = tag;
  return writeVarint(buf, at, v);
}

/** An enum field: skipped when zero; a negative value sign-extended to ten bytes, as toBinary does. */
export function writeEnum(buf: Buffer, at: number, tag: number, v: number): number {
  if (v === 0) return at;
  buf[at++] = tag;
  if (v > 0) return writeVarint(buf, at, v);
  for (let i = 0; i < 9; i++) {
    buf[at++] = (v & 0x7f) | 0x80;
    v >>= 7;
  }
  buf[at++] = 1;
  return at;
}

/** A (u)int64 field from its bigint: skipped when zero, unless `always`. */
export function writeInt64(buf: Buffer, at: number, tag: number, v: bigint, signed: boolean, always = false): number {
  if (v === 0n && !always) return at;
  buf[at++] = tag;
  if (v >= 0n && v < 0x1_0000_0000n) return writeVarint(buf, at, Number(v));
  let u = uint64Bits(v, signed);
  while (u >= 0x80n) {
    buf[at++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buf[at++] = Number(u);
  return at;
}

// toBinary writes a double with DataView.setFloat64, little-endian: so does this, into eight
// scratch bytes, so that NaN and -0 come out with the same bits.
const doubleView = new DataView(new ArrayBuffer(8));
const doubleBytes = new Uint8Array(doubleView.buffer);

/** A double field with explicit presence: written whenever set, zero, -0 and NaN included. */
export function writeDouble(buf: Buffer, at: number, tag: number, v: number): number {
  buf[at++] = tag;
  doubleView.setFloat64(0, v, true);
  for (let i = 0; i < 8; i++) buf[at + i] = doubleBytes[i]!;
  return at + 8;
}

/** A message's unknown fields, after its known ones, as toBinary writes them: tag, raw data. */
export function writeUnknown(buf: Buffer, at: number, unknown: readonly UnknownField[] | undefined): number {
  if (unknown === undefined) return at;
  for (let i = 0; i < unknown.length; i++) {
    const f = unknown[i]!;
    at = writeVarint(buf, at, ((f.no << 3) | f.wireType) >>> 0);
    buf.set(f.data, at);
    at += f.data.length;
  }
  return at;
}
