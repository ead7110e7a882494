/**
 * Heavy requests take turns on the event loop, one per loop iteration, so that the small calls
 * of other sessions are served between them.
 *
 * A request of a few MB costs tens of milliseconds of synchronous work once it has arrived
 * (decoding, hashing, the body scan, JSON.parse, rendering an echo). Sixty-four of them arriving
 * together ran back to back in one poll phase, and a bystander's 1 KB call waited behind all of
 * them: 1.3 to 1.8 s instead of 160 ms. Each heavy request now waits for its own turn: a
 * setImmediate after the previous heavy request's turn, so the loop polls for I/O (the other
 * sessions' calls) between any two. A bystander then waits for at most one heavy request, not
 * for every one queued. Small requests never wait. The queue is in arrival order, which is the
 * order the transports hand requests to the engine anyway; it holds no session state.
 */

/** Requests at least this large (bytes of body, or characters of message text) take turns. */
export const heavyRequestBytes = 256 * 1024;

let lastTurn: Promise<void> = Promise.resolve();

/** Resolves when it is this heavy request's turn: after every earlier one's, and after the loop has polled for I/O. */
export function heavyTurn(): Promise<void> {
  const turn = lastTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  lastTurn = turn;
  return turn;
}

/**
 * Bytes of request bodies read in one turn of the loop, past which a large body (heavyRequestBytes
 * or more) reads on only on a heavy turn. Sixty-four clients sending 5.8 MB bodies at once had
 * their sockets read (and their chunks handed to JS) in one poll phase: 40-60 ms of the loop's
 * CPU before any other session's call was looked at.
 */
export const readTurnBytes = 1024 * 1024;

let readThisTurn = 0;
let readTurnOpen = false;
const closeReadTurn = () => {
  readTurnOpen = false;
  readThisTurn = 0;
};

/** Counts `bytes` of body read now; true once this turn of the loop has read its readTurnBytes. */
export function readTurnSpent(bytes: number): boolean {
  if (!readTurnOpen) {
    readTurnOpen = true;
    // The turn ends when the loop next reaches its check phase, as a write turn does.
    setImmediate(closeReadTurn);
  }
  readThisTurn += bytes;
  return readThisTurn >= readTurnBytes;
}

/** Characters of message text a request carries (contents and tool calls' arguments): what makes it heavy to decode, render and record. */
export function messageChars(request: { messages: readonly { content: string; toolCalls?: readonly { arguments: string }[] }[] }): number {
  let n = 0;
  for (const m of request.messages) {
    n += m.content.length;
    if (m.toolCalls) for (const t of m.toolCalls) n += t.arguments.length;
  }
  return n;
}

/**
 * The longest a stream's writer keeps writing in one turn of the event loop, in ms of wall time.
 * A large reply to a reader on loopback is taken by the kernel as fast as it is made: one burst
 * of the paced writer rendered and wrote MBs of events (60-400 ms of the loop beside 64 stalled
 * SSE readers of 960 KB echoes) before the socket first said it was full.
 */
export const writeTurnMs = 4;

/** A transport's output as a stream's writer sees it (engine/paced-writer.ts's PaceSink). */
interface Sink<T> {
  put(piece: T): boolean;
  onRoom(resume: () => void): () => void;
  gone(): boolean;
}

/**
 * `sink`, taking at most writeTurnMs of writing a turn: past that, put() says "full" although the
 * transport has room, and the writer is resumed on a heavy turn (heavyTurn), after the loop has
 * polled for I/O and after the heavy requests queued before it. A stream that has once used up a
 * turn is large, and from then on is resumed on a heavy turn when its transport has room again
 * too: 64 sockets draining in one poll phase otherwise resumed 64 writers back to back, each for
 * its whole turn. A small stream (a few words a frame, or frames apart in time) never uses up a
 * turn and never waits; a large one writes in slices, as heavy requests run, so another session's
 * call waits for at most one slice. What is written, and in what order, is the same: only when
 * changes.
 */
export function inWriteTurns<T>(sink: Sink<T>): Sink<T> {
  let turnStart: number | undefined;
  let yielded = false;
  let large = false;
  const endTurn = () => (turnStart = undefined);
  /** Calls `resume` on a heavy turn; returns what stops that. */
  const onHeavyTurn = (resume: () => void) => {
    let stopped = false;
    heavyTurn().then(() => {
      if (!stopped) resume();
    }, resume);
    return () => (stopped = true);
  };
  return {
    put(piece) {
      const now = performance.now();
      if (turnStart === undefined) {
        turnStart = now;
        // The turn ends when the loop next reaches its check phase.
        setImmediate(endTurn);
      }
      if (!sink.put(piece)) return false;
      if (now - turnStart < writeTurnMs) return true;
      yielded = large = true;
      return false;
    },
    onRoom(resume) {
      if (yielded) {
        yielded = false;
        return onHeavyTurn(resume);
      }
      if (!large) return sink.onRoom(resume);
      let stopTurn: (() => void) | undefined;
      const stopRoom = sink.onRoom(() => (stopTurn = onHeavyTurn(resume)));
      return () => {
        stopRoom();
        stopTurn?.();
      };
    },
    gone: () => sink.gone(),
  };
}
