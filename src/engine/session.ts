import type { CallStatus, CompiledFaultPlan, CompiledList, CompiledScript } from "../script/compiled-script.js";
import { ByteArena } from "./byte-arena.js";
import { FaultState } from "./choose-fault.js";
import type { PlanIdentity } from "./encode-episode.js";

/** How far a session has got through one list: uses per entry. */
export interface ListCursor {
  readonly list: CompiledList;
  used: Uint32Array;
  /** Calls this list has answered, across cycles. */
  served: number;
}

/** A call running in an episode, as the episode sees it: something a reset can cut off. */
export interface RunningCall {
  /** Ends the call's waits at once; the call then ends with `status`. */
  close(status: CallStatus): void;
}

/** A call's occurrences in its step, as a fault plan counts them (Episode.countStep). */
export interface StepCounts {
  /** The K-th call of the step, every call counted (`count: all`); 0 for a call refused before the plan saw it. */
  occurrence: number;
  /** The K-th call of the clean run it stands for (`count: clean`); 0 likewise. */
  cleanOccurrence: number;
}

/**
 * One episode of a session: its recorded calls, sequence numbers and declared timeline. A call
 * captures the journal it started in and records into that one, so a reset that swaps in a new
 * journal while the call runs can never mix two episodes.
 */
export class EpisodeJournal {
  /** Recorded calls, encoded, by sequence - 1; a slot stays empty while its call is in flight. */
  calls: (Uint8Array | undefined)[] = [];
  /** Bytes of the recorded calls (their encoded lengths summed), for --max-episode-bytes. */
  bytes = 0;
  /** Last sequence number handed out. */
  sequence = 0;
  /** The declared timeline, in ms: where the next call starts. */
  timelineMs = 0;
  /** Calls of this episode still running. */
  readonly running = new Set<RunningCall>();
  /** Where the encoded calls' bytes are kept: they live and die with this journal. */
  readonly arena = new ByteArena();
  private onIdle: (() => void) | undefined;
  /** Where the episode stands in its fault plan; undefined when it runs under none. */
  readonly faults: FaultState | undefined;

  constructor(
    /** The episode's id in answers' headers (instance-id.ts); never in its bytes. */
    readonly id: string,
    plan?: CompiledFaultPlan,
  ) {
    this.faults = plan ? new FaultState(plan) : undefined;
  }

  /** Calls per step id so far, as the fault plan counts them: the occurrences WatchSession events give. */
  private readonly stepCounts = new Map<string, { all: number; clean: number }>();

  /**
   * Counts one more call of `step` (whose fault is known: `keepsEntry` from choose-fault.ts) and
   * answers its occurrences, from 1, as a fault plan's `at: {step, occurrence}` counts them:
   * `occurrence` counts every call (`count: all`), `cleanOccurrence` the clean run's calls
   * (`count: clean`): a call whose fault took the entry's place is not counted, so it and its
   * retry share the clean occurrence K of the clean run's call they stand for.
   */
  countStep(step: string, keepsEntry: boolean): StepCounts {
    const n = this.stepCounts.get(step) ?? { all: 0, clean: 0 };
    this.stepCounts.set(step, { all: n.all + 1, clean: n.clean + (keepsEntry ? 1 : 0) });
    return { occurrence: n.all + 1, cleanOccurrence: n.clean + 1 };
  }

  /** Records call `sequence` (1-based) as its encoded bytes, and counts them. */
  record(sequence: number, call: Uint8Array): void {
    this.calls[sequence - 1] = call;
    this.bytes += call.length;
  }

  /** Marks a call finished (after it has recorded itself). */
  finish(call: RunningCall): void {
    this.running.delete(call);
    if (this.running.size === 0) this.onIdle?.();
  }

  /** Resolves once no call of this episode is running. */
  settled(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.onIdle;
      this.onIdle = () => {
        this.onIdle = undefined;
        previous?.();
        resolve();
      };
    });
  }

  /** The plan this episode runs under, as its Episode records it; undefined for none. */
  planIdentity(): PlanIdentity | undefined {
    const plan = this.faults?.plan;
    return plan && { name: plan.name, digest: plan.digest, seed: plan.chaos?.seed };
  }

  /** Call `sequence`'s encoded bytes (1-based), once it has recorded itself. */
  recordedAt(sequence: number): Uint8Array | undefined {
    return this.calls[sequence - 1];
  }

  /** The recorded calls, in sequence order (calls still in flight are left out). */
  recorded(): Uint8Array[] {
    return this.calls.filter((c): c is Uint8Array => c !== undefined);
  }
}

/**
 * One session: its own script, cursors and episode, so parallel tests can share a server
 * without touching each other.
 */
export class Session {
  private cursors = new Map<string, ListCursor>();
  /** The open episode: calls starting now record into it. */
  episode: EpisodeJournal;
  /**
   * The episodes this session is closing, chained: each close waits for the one before, so
   * closed episodes leave the session (to onEpisodeClosed, to disk) in the order they closed.
   */
  closing: Promise<unknown> = Promise.resolve();
  /**
   * When the session was last used (a call starting or ending, a reset or a reload), in wall-clock
   * ms. Operational only, for idle eviction (--session-idle-timeout): it never enters an episode.
   */
  lastUsedMs = Date.now();

  constructor(
    readonly name: string,
    public script: CompiledScript,
    /** Mints the id of each episode the session opens. */
    private readonly episodeId: (session: string) => string,
  ) {
    this.episode = new EpisodeJournal(episodeId(name), script.faults);
  }

  /** The cursor of a list, created on first use. */
  cursor(list: CompiledList): ListCursor {
    let c = this.cursors.get(list.key);
    if (!c) {
      c = { list, used: new Uint32Array(list.entries.length), served: 0 };
      this.cursors.set(list.key, c);
    }
    return c;
  }

  /** Every list of the script with its cursor (unused lists get a fresh one). */
  allCursors(): ListCursor[] {
    return [...this.script.lists.values()].map((l) => this.cursor(l));
  }

  /**
   * Rewinds cursors and opens a new episode at once; returns the closed one. Its calls still
   * running go on recording into it: the caller cuts them off and waits for them. The new
   * episode runs under `plan`: by default the script's own (its `faults:`), so a reset clears a
   * plan set on the session (SetFaultPlan) and brings back the script's.
   */
  reset(script = this.script, plan = script.faults): EpisodeJournal {
    const closed = this.episode;
    this.script = script;
    this.cursors.clear();
    this.episode = new EpisodeJournal(this.episodeId(this.name), plan);
    return closed;
  }
}
