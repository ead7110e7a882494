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

/** Characters of message text a request carries: what makes it heavy to decode, render and record. */
export function messageChars(request: { messages: readonly { content: string }[] }): number {
  let n = 0;
  for (const m of request.messages) n += m.content.length;
  return n;
}
