/** The part of a grpc-js writable call a FrameWriter uses. */
export interface FrameSink<T> {
  /** grpc-js calls `written` back once HTTP/2 has taken the message (never, once the call is cut off). */
  write(message: T, written: () => void): boolean;
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
 * messages is full) write() answers a promise that resolves when all of them are written. A
 * caller that waits for it holds in transport buffers at most `maxUnwrittenBytes` plus the
 * message that crossed it. A call cut off meanwhile is never written back to (grpc-js drops the
 * callbacks): the caller must stop waiting on the call's cancellation, and release() settles the
 * promise.
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
  return {
    write(message) {
      const n = size(message);
      frames++;
      bytes += n;
      sizes.push(n);
      if (call.write(message, onWritten) && bytes <= maxUnwrittenBytes) return undefined;
      return new Promise<void>((resolve) => (room = resolve));
    },
    written() {
      return frames === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve));
    },
    release: settle,
  };
}
