import { createPacedWriter, type PaceSink } from "../engine/paced-writer.js";
import { inWriteTurns } from "../shared/heavy-turns.js";

/** The part of a grpc-js writable call a FrameWriter uses. */
export interface FrameSink<T> {
  /** grpc-js calls `written` back once HTTP/2 has taken the message (never, once the call is cut off). */
  write(message: T, written: () => void): boolean;
  /** Set by grpc-js once the call is cut off (the client cancelled, its deadline passed). */
  readonly cancelled?: boolean;
}

/** Writes one streaming call's messages to grpc-js with back-pressure (see createFrameWriter). */
export interface FrameWriter<T> {
  /** Hands a message to grpc-js; returns a promise when the buffers are full (wait for it before the next). */
  write(message: T): Promise<void> | undefined;
  /** Resolves once every message handed over is written to HTTP/2 (a scripted drop waits for it). */
  written(): Promise<void>;
  /** Settles what waits; once, when the call ends, however it ends. */
  release(): void;
}

/**
 * grpc-js takes every message it is given: its write() returning false is advice, and it buffers
 * whatever comes after. So this counts the bytes handed over (`size` of each message) and not yet
 * written to HTTP/2, and once they pass `maxUnwrittenBytes` (or grpc-js's own buffer of 16
 * messages is full) the sink is full until all of them are written: the paced writer every
 * streaming front shares (engine/paced-writer.ts) then holds the next frame. A caller that waits
 * holds in transport buffers at most `maxUnwrittenBytes` plus the message that crossed it. A call
 * cut off meanwhile is never written back to (grpc-js drops the callbacks): the caller must stop
 * waiting on the call's cancellation, and release() settles the promise.
 */
export function createFrameWriter<T>(call: FrameSink<T>, size: (message: T) => number, maxUnwrittenBytes: number): FrameWriter<T> {
  let frames = 0;
  let bytes = 0;
  // Sizes of the messages handed over, oldest first: grpc-js writes them in order.
  const sizes: number[] = [];
  let head = 0;
  let room: (() => void) | undefined;
  let idle: (() => void) | undefined;
  const settle = () => {
    const r = room;
    const i = idle;
    room = idle = undefined;
    r?.();
    i?.();
  };
  const onWritten = () => {
    bytes -= sizes[head++]!;
    if (--frames === 0) {
      sizes.length = head = 0;
      settle();
    }
  };
  const sink: PaceSink<T> = {
    put(message) {
      const n = size(message);
      frames++;
      bytes += n;
      sizes.push(n);
      return call.write(message, onWritten) && bytes <= maxUnwrittenBytes;
    },
    onRoom(resume) {
      if (frames === 0) {
        queueMicrotask(resume);
        return () => {};
      }
      room = resume;
      return () => (room = undefined);
    },
    gone: () => call.cancelled === true,
  };
  // A large stream writes a slice per turn of the loop (inWriteTurns).
  const paced = createPacedWriter(inWriteTurns(sink));
  return {
    write: (message) => paced.write([message]),
    written() {
      return frames === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve));
    },
    release() {
      paced.release();
      settle();
    },
  };
}
