import { protoInt64 } from "@bufbuild/protobuf";

/**
 * Thrown by a WireCursor when the bytes leave the shape the fast request decoder reads
 * (decode-generate-request.ts), which then hands the same bytes to protobuf-es's fromBinary:
 * that one decides what they are, error included. Not an Error: nothing needs its stack.
 */
export const OFF_SHAPE: unique symbol = Symbol("off-shape");

// What protobuf-es decodes non-ASCII strings with (its strict mode, proto3 strings are
// validated): the same decoder gives the same string, and its throwing tells us to fall back.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A cursor over protobuf wire bytes reading values exactly as protobuf-es's BinaryReader reads
 * them, with one difference: where BinaryReader would read past the end of the enclosing message
 * (or the bytes), or throw, this throws OFF_SHAPE instead.
 */
export class WireCursor {
  pos = 0;
  /** The end of the message being read: no value may run past it (enter, leave). */
  end: number;
  private view: DataView | undefined;

  constructor(readonly buf: Buffer) {
    this.end = buf.length;
  }

  /** A one-byte tag (field numbers below 16); 0, which no field has, for a longer one. */
  tag(): number {
    // The caller reads a tag only while pos < end.
    const b = this.buf[this.pos++]!;
    return b < 0x80 ? b : 0;
  }

  /** A uint32 varint as BinaryReader's varint32read: bits past the 32nd dropped, at most ten bytes. */
  uint32(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    let result = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= end) throw OFF_SHAPE;
      const b = buf[pos++]!;
      result |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return result;
      }
    }
    if (pos >= end) throw OFF_SHAPE;
    let b = buf[pos++]!;
    result |= (b & 0x0f) << 28;
    // A negative int32 (an enum) is ten bytes: the sign extension is read and dropped.
    for (let read = 5; b >= 0x80; read++) {
      if (read === 10 || pos >= end) throw OFF_SHAPE;
      b = buf[pos++]!;
    }
    this.pos = pos;
    return result >>> 0;
  }

  /** An int64 varint as BinaryReader's varint64read, as protobuf-es represents it (bigint). */
  int64(): bigint {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    let b = 0x80;
    for (let shift = 0; shift < 28 && b >= 0x80; shift += 7) {
      if (pos >= end) throw OFF_SHAPE;
      b = buf[pos++]!;
      lo |= (b & 0x7f) << shift;
    }
    if (b >= 0x80) {
      if (pos >= end) throw OFF_SHAPE;
      b = buf[pos++]!;
      lo |= (b & 0x0f) << 28;
      hi = (b & 0x70) >> 4;
      for (let shift = 3; shift <= 31 && b >= 0x80; shift += 7) {
        if (pos >= end) throw OFF_SHAPE;
        b = buf[pos++]!;
        hi |= (b & 0x7f) << shift;
      }
      if (b >= 0x80) throw OFF_SHAPE;
    }
    this.pos = pos;
    return protoInt64.dec(lo, hi) as bigint;
  }

  /** A double, read with DataView little-endian as BinaryReader does, so NaN keeps its bits. */
  double(): number {
    const at = this.pos;
    if (at + 8 > this.end) throw OFF_SHAPE;
    this.pos = at + 8;
    const buf = this.buf;
    this.view ??= new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    return this.view.getFloat64(at, true);
  }

  /** A length-delimited string; OFF_SHAPE for invalid UTF-8 (protobuf-es throws on it). */
  string(): string {
    const len = this.uint32();
    const start = this.pos;
    const stop = start + len;
    if (stop > this.end) throw OFF_SHAPE;
    this.pos = stop;
    const buf = this.buf;
    for (let i = start; i < stop; i++) {
      if (buf[i]! > 0x7f) {
        try {
          return strictUtf8.decode(buf.subarray(start, stop));
        } catch {
          throw OFF_SHAPE;
        }
      }
    }
    return buf.toString("latin1", start, stop);
  }

  /** Enters a length-delimited message: returns the enclosing message's end, for leave(). */
  enter(): number {
    const len = this.uint32();
    const outer = this.end;
    const end = this.pos + len;
    // BinaryReader lets a nested message run past its parent's end; protobuf-es decides those.
    if (end > outer) throw OFF_SHAPE;
    this.end = end;
    return outer;
  }

  /** Back in the enclosing message, after a nested one read to its end. */
  leave(outer: number): void {
    this.end = outer;
  }
}
