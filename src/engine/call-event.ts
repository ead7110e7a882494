import type { FaultKind, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import type { ChosenFault } from "./choose-fault.js";
import type { StepCounts } from "./session.js";

/**
 * A call of a session starting or ending, as WatchSession streams it: a harness waits on these
 * (to kill an executor once a held call has arrived) instead of polling. Never recorded.
 */
export interface CallEvent {
  kind: "started" | "ended";
  /** The episode's id (x-modelstub-episode). */
  episode: string;
  sequence: number;
  step: string;
  /** Which call of `step` it is in its episode, from 1, every call counted (a fault plan's `count: all`). */
  occurrence: number;
  /** Which call of `step` in the clean run it stands for, from 1 (`count: clean`): a faulted call and its retry share it. */
  cleanOccurrence: number;
  method: "generate" | "stream";
  /** What the plan does to the call, when anything. */
  fault?: { rule: string; kind: FaultKind; roll: number };
  /** Declared ms from the episode's start. */
  startMs: number;
  /** On "ended" only. */
  endMs?: number;
  outcome?: Outcome;
  code?: number;
  entry?: string;
}

/** A call's event as it starts (`started`), or the start of its `ended` event. */
export function callEvent(
  kind: CallEvent["kind"],
  episode: string,
  sequence: number,
  step: string,
  counts: StepCounts,
  method: CallEvent["method"],
  fault: ChosenFault | undefined,
  startMs: number,
): CallEvent {
  return {
    kind,
    episode,
    sequence,
    step,
    occurrence: counts.occurrence,
    cleanOccurrence: counts.cleanOccurrence,
    method,
    ...(fault ? { fault: { rule: fault.rule, kind: fault.fault.kind, roll: fault.roll } } : {}),
    startMs,
  };
}

/** A listener of one session's call events; returns nothing, and a throw is its own bug (swallowed). */
export type CallEventListener = (event: CallEvent) => void;

/** Per-session listeners, by session name: the stub tells them as calls start and end. */
export class CallWatchers {
  private readonly bySession = new Map<string, Set<CallEventListener>>();

  /** Adds a listener for `session`; returns the function that removes it. */
  add(session: string, listener: CallEventListener): () => void {
    let set = this.bySession.get(session);
    if (!set) this.bySession.set(session, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.bySession.get(session) === set) this.bySession.delete(session);
    };
  }

  /** Whether anyone watches `session` (events are not built otherwise). */
  watched(session: string): boolean {
    return this.bySession.has(session);
  }

  emit(session: string, event: CallEvent): void {
    const set = this.bySession.get(session);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch {
        // A watcher's failure is its own: the call goes on.
      }
    }
  }
}
