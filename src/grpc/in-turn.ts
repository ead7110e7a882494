import { heavyRequestBytes, heavyTurn, messageChars } from "../shared/heavy-turns.js";

/**
 * Runs a call now or, for a request of MBs, on its heavy turn (shared/heavy-turns.ts), so the
 * calls of other sessions are served between heavy ones; a call the client cancelled while it
 * waited does not run (grpc-js has ended it). `onError`: what a throw of `run` becomes.
 */
export function inTurn(
  call: { request: { messages: readonly { content: string }[] }; cancelled: boolean },
  run: () => void,
  onError: (err: unknown) => void,
): void {
  if (messageChars(call.request) < heavyRequestBytes) return run();
  heavyTurn()
    .then(() => {
      if (!call.cancelled) run();
    })
    .catch(onError);
}
