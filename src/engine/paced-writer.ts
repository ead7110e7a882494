/** A transport's output, as a PacedWriter writes to it. */
export interface PaceSink<T> {
  /** Takes one piece; false once the transport holds as much as it should (its high-water mark). */
  put(piece: T): boolean;
  /**
   * Calls `resume` once, later (never before returning), when the transport has room again or
   * has gone away; returns what stops that wait (the writer calls it when released first).
   */
  onRoom(resume: () => void): () => void;
  /** Whether the transport has gone (the client left, the call was cut off): nothing more is put. */
  gone(): boolean;
}

/** Writes a stream's frames to one transport with back-pressure (see createPacedWriter). */
export interface PacedWriter<T> {
  /**
   * Hands over the pieces of one frame, pulled one at a time while the transport has room.
   * Returns nothing when all of them went and the transport has room for more; otherwise a
   * promise that settles once they have all gone and there is room (the engine's onFrame
   * contract, call-input.ts). A piece that cannot be made (a bug of the dialect) throws here
   * when it is the frame's first, so the call ends INTERNAL; later, it rejects the promise.
   */
  write(pieces: Iterable<T>): Promise<void> | undefined;
  /**
   * Resolves once every piece written so far has been handed over, or the transport has gone;
   * rejects if a piece could not be made (the answer is then broken, not ended).
   */
  flushed(): Promise<void>;
  /** Stops: drops the pieces not yet handed over, stops waiting, settles every promise; once, when the call ends. */
  release(): void;
}

/**
 * The one back-pressured writer of every streaming front (gRPC's GenerateStream, and the SSE of
 * every HTTP dialect). A frame's pieces are made as the transport takes them, never ahead: a
 * piece is pulled from its iterator only when the last one went in below the high-water mark, so
 * a reader that stops reading holds the transport's buffer plus the one piece that crossed it,
 * and the rest of the frame (an event carrying a whole reply, say) is never rendered. Nothing is
 * copied or queued here but the iterators themselves.
 */
export function createPacedWriter<T>(sink: PaceSink<T>): PacedWriter<T> {
  const queue: Iterator<T>[] = [];
  let full = false;
  let stopWaiting: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  /** Who waits for room after their frame (write) and for the queue to empty (flushed). */
  let ready: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  let empty: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  const settle = () => {
    const r = ready;
    ready = [];
    for (const w of r) failure ? w.reject(failure.error) : w.resolve();
  };
  const settleEmpty = () => {
    const e = empty;
    empty = [];
    for (const w of e) failure ? w.reject(failure.error) : w.resolve();
  };
  const stop = () => {
    queue.length = 0;
    full = false;
    stopWaiting?.();
    stopWaiting = undefined;
    settle();
    settleEmpty();
  };
  const resume = () => {
    stopWaiting = undefined;
    full = false;
    pump();
  };
  /** Hands over pieces until the queue is empty or the transport is full; true when it emptied with room to spare. */
  const pump = (): boolean => {
    try {
      while (!full) {
        if (sink.gone()) {
          stop();
          return true;
        }
        const it = queue[0];
        if (!it) break;
        const next = it.next();
        if (next.done) queue.shift();
        else if (!sink.put(next.value)) full = true;
      }
    } catch (error) {
      failure = { error };
      stop();
      return false;
    }
    if (full) {
      stopWaiting ??= sink.onRoom(resume);
      return false;
    }
    settle();
    settleEmpty();
    return true;
  };

  return {
    write(pieces) {
      if (failure) throw failure.error;
      const idle = queue.length === 0 && !full;
      queue.push(pieces[Symbol.iterator]());
      if (idle && pump()) return undefined;
      // pump() may have failed just now: TypeScript cannot see that it sets `failure`.
      const failed = failure as { error: unknown } | undefined;
      if (failed) throw failed.error;
      return new Promise<void>((resolve, reject) => ready.push({ resolve, reject }));
    },
    flushed() {
      if (failure) return Promise.reject(failure.error);
      if (queue.length === 0 || sink.gone()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => empty.push({ resolve, reject }));
    },
    release: stop,
  };
}
