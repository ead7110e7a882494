import type { UnknownField } from "@bufbuild/protobuf";
import { varintSize } from "./varint.js";
import { delimitedSize, reserveLength } from "./proto-lengths.js";

/**
 * Sizes of protobuf fields as protobuf-es's toBinary writes them, for the hand-written episode
 * call encoder (write-episode-call.ts). Each returns a whole field's size, tag included (one
 * byte: every field number written by hand is below 16). Validation mirrors toBinary's: a value
 * it would refuse to encode throws here too, before anything is written.
 */

/** Strings longer than this are measured natively: the call into C++ pays off past it. */
const NATIVE_LENGTH_FROM = 48;

/**
 * The UTF-8 length of `s` as TextEncoder (toBinary's encoder) writes it: a lone surrogate
 * becomes U+FFFD, three bytes, as Buffer's UTF-8 writer does too.
 */
export function utf8Size(s: string): number {
  const len = s.length;
  if (len > NATIVE_LENGTH_FROM) return Buffer.byteLength(s, "utf8");
  let n = len;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      n += 1;
      continue;
    }
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        n += 2; // a pair: two code units, four bytes
        i++;
        continue;
      }
    }
    n += 2; // three bytes: the rest of the BMP, and a lone surrogate (U+FFFD)
  }
  return n;
}

/** A string field: nothing when empty (proto3 implicit presence). Records its UTF-8 length. */
export function stringSize(s: string): number {
  return s === "" ? 0 : delimitedSize(reserveLength(), utf8Size(s));
}

/** An element of a repeated string field: written even when empty. Records its length. */
export function listStringSize(s: string): number {
  return delimitedSize(reserveLength(), utf8Size(s));
}

/** Throws as toBinary does for a uint32 field holding anything but an unsigned 32-bit integer. */
export function checkUint32(v: number): number {
  if (v >>> 0 !== v) throw new Error(`invalid uint32: ${v}`);
  return v;
}

/** A uint32 field's varint and tag; 0 when zero, unless the field has explicit presence. */
export function uint32Size(v: number, always = false): number {
  return v === 0 && !always ? 0 : 1 + varintSize(checkUint32(v));
}

/** An enum (int32) field: nothing when zero; a negative value takes ten bytes, sign-extended. */
export function enumSize(v: number): number {
  if (v === 0) return 0;
  if ((v | 0) !== v) throw new Error(`invalid int32: ${v}`);
  return 1 + (v > 0 ? varintSize(v) : 10);
}

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;
const INT64_MIN = -0x8000_0000_0000_0000n;
const INT64_MAX = 0x7fff_ffff_ffff_ffffn;

/**
 * The unsigned 64 bits a (u)int64 varint carries: a negative int64 is its two's complement,
 * a ten-byte varint. Throws, as toBinary does, for a value out of the field type's range.
 */
export function uint64Bits(v: bigint, signed: boolean): bigint {
  if (signed ? v < INT64_MIN || v > INT64_MAX : v < 0n || v > UINT64_MAX) {
    throw new Error(`invalid ${signed ? "int64" : "uint64"}: ${v}`);
  }
  return BigInt.asUintN(64, v);
}

/** A (u)int64 field's tag and varint, `always` for explicit presence; 0 for an unset zero. */
export function int64Size(v: bigint, signed: boolean, always = false): number {
  if (v === 0n && !always) return 0;
  // Small values, nearly all (sequence numbers, timestamps in milliseconds), stay numbers.
  if (v >= 0n && v < 0x1_0000_0000n) return 1 + varintSize(Number(v));
  let u = uint64Bits(v, signed);
  let n = 2;
  while (u >= 0x80n) {
    u >>= 7n;
    n++;
  }
  return n;
}

/** A message's unknown fields, as toBinary writes them after the known ones: tag, raw data. */
export function unknownSize(unknown: readonly UnknownField[] | undefined): number {
  if (unknown === undefined) return 0;
  let n = 0;
  for (let i = 0; i < unknown.length; i++) {
    const f = unknown[i]!;
    n += varintSize(((f.no << 3) | f.wireType) >>> 0) + f.data.length;
  }
  return n;
}
