import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import type { CompiledEntry, ReplayMode, RequestView, TemplateContext } from "../script/compiled-script.js";
import { callIdsOf } from "../shared/call-ids.js";
import { callEvent, type CallEvent } from "./call-event.js";
import type { CallInput } from "./call-input.js";
import { keepsEntry, type ChosenFault } from "./choose-fault.js";
import { declaredBudgetMs, type Clock } from "./clock.js";
import { Execution } from "./execution.js";
import { renderReply, type RenderedReply } from "./render-reply.js";
import { selectEntry, type Selection } from "./select-entry.js";
import type { EpisodeJournal, Session, StepCounts } from "./session.js";

/**
 * One call while it runs in a session: what it was given, where it is in its episode, and what
 * it learns on the way (the entry that answers, the fault that strikes it) for the episode, the
 * log and the call's events. runCall makes it; runFault and the script's answer share it.
 *
 * The call records into the episode that was open when it started (`episode`), even when a
 * reset or reload closes that episode meanwhile (the reset cuts the call off and waits for it).
 */
export class CallContext {
  /** The episode the call records into: the session's when the call started. */
  readonly episode: EpisodeJournal;
  readonly sequence: number;
  /** Declared ms from the episode's start. */
  readonly startMs: number;
  readonly request: GenerateRequest;
  /** The request's step id, else the metadata's. */
  readonly stepId: string;
  /**
   * Which call of its step it is in the episode, as the fault plan counts (set once the call's
   * fault is known, countCall); a call refused before the plan sees it stays 0.
   */
  counts: StepCounts = { occurrence: 0, cleanOccurrence: 0 };
  /** The call's waits, frames and cut-offs on the declared timeline. */
  readonly x: Execution;
  /** The entry that answered, for the episode ("" for none) and the log. */
  entryRef = "";
  entryName: string | undefined;
  /** The request's last user message, for the log ("" until the request is looked at). */
  lastUser = "";
  /** What the fault plan does to the call, when anything. */
  fault: ChosenFault | undefined;

  constructor(
    readonly session: Session,
    clock: Clock,
    readonly input: CallInput,
    private readonly replayMode: ReplayMode | undefined,
  ) {
    this.episode = session.episode;
    this.sequence = ++this.episode.sequence;
    this.startMs = this.episode.timelineMs;
    this.request = input.request;
    this.x = new Execution(clock, input, declaredBudgetMs(input.budgetMs ?? Infinity));
    this.episode.running.add(this.x);
    this.stepId = this.request.stepId || (input.stepFromMetadata ?? "");
  }

  /** Counts the call in its step once its fault is chosen: a fault that keeps the entry is not a clean call. */
  countCall(): void {
    this.counts = this.episode.countStep(this.stepId, keepsEntry(this.fault));
  }

  /** The call's event as it starts (`started`), or the start of its `ended` event. */
  event(kind: CallEvent["kind"]): CallEvent {
    return callEvent(kind, this.episode.id, this.sequence, this.stepId, this.counts, this.input.method, this.fault, this.startMs);
  }

  /** Selects the entry that answers the request, as the call would; `consume` uses it up. */
  select(view: RequestView, consume: boolean): Selection {
    return selectEntry(this.session, this.stepId, view, consume, { request: this.request, mode: this.replayMode });
  }

  /** Notes the entry that answers (before any wait, so a call cut off still records it). */
  answeredBy(entry: CompiledEntry): void {
    this.entryRef = entry.ref;
    this.entryName = entry.name;
  }

  /** Renders an entry's reply for this call (undefined for an entry that does not reply). */
  render(view: RequestView, entry: CompiledEntry, captures: RegExpExecArray | null): RenderedReply | undefined {
    if (entry.action.kind !== "reply") return undefined;
    const ctx: TemplateContext = {
      lastUser: view.lastUser,
      lastToolResult: view.lastToolResult,
      step: this.stepId,
      model: this.request.model || this.session.script.defaultModel,
      session: this.session.name,
      turn: view.turn,
      captures,
    };
    return renderReply(entry.action.reply, ctx, this.request, callIdsOf(this.session.name, this.sequence));
  }

  /** Ends the call's time: detaches it from the transport, moves the episode's timeline on; its declared end. */
  end(): number {
    this.x.release();
    const endMs = this.startMs + this.x.elapsed;
    if (endMs > this.episode.timelineMs) this.episode.timelineMs = endMs;
    return endMs;
  }
}
