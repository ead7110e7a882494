import type { CompiledList, CompiledScript } from "./compile-script.js";

/** How far a session has got through one list: uses per entry. */
export interface ListCursor {
  readonly list: CompiledList;
  used: Uint32Array;
  /** Calls this list has answered, across cycles. */
  served: number;
}

/**
 * One session: its own script, cursors and episode, so parallel tests can share a server
 * without touching each other.
 */
export class Session {
  private cursors = new Map<string, ListCursor>();
  /** Recorded calls, encoded, by sequence - 1; a slot stays empty while its call is in flight. */
  calls: (Uint8Array | undefined)[] = [];
  /** Last sequence number handed out. */
  sequence = 0;
  /** The session's declared timeline, in ms: where the next call starts. */
  timelineMs = 0;

  constructor(
    readonly name: string,
    public script: CompiledScript,
  ) {}

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

  /** Rewinds cursors and starts a new episode; returns the calls of the closed one. */
  reset(script = this.script): Uint8Array[] {
    const closed = this.recordedCalls();
    this.script = script;
    this.cursors.clear();
    this.calls = [];
    this.sequence = 0;
    this.timelineMs = 0;
    return closed;
  }

  /** The recorded calls, in sequence order (calls still in flight are left out). */
  recordedCalls(): Uint8Array[] {
    return this.calls.filter((c): c is Uint8Array => c !== undefined);
  }
}
