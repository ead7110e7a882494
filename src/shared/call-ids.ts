/**
 * The ids the engine gives a call's reply, derived from its session and sequence so that the
 * same script driven the same way gives the same ids in every run, on every front: the
 * response id `gen-<session>-<sequence>` and tool call ids `call-<session>-<sequence>-<index>`.
 * The recorder and the script writer derive them too (to map an upstream's ids to ours, and to
 * leave out an id a replay would derive anyway), and the HTTP front names error answers by them.
 */
export interface CallIds {
  response: string;
  toolCall(index: number): string;
}

/** The response id of call `sequence` of `session`. */
export function responseIdOf(session: string, sequence: number | bigint): string {
  return `gen-${session}-${sequence}`;
}

/** The id of tool call `index` of call `sequence` of `session`. */
export function toolCallIdOf(session: string, sequence: number | bigint, index: number): string {
  return `call-${session}-${sequence}-${index}`;
}

/** Both, for one call. */
export function callIdsOf(session: string, sequence: number | bigint): CallIds {
  return { response: responseIdOf(session, sequence), toolCall: (i) => toolCallIdOf(session, sequence, i) };
}
