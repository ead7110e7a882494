import { toJsonString } from "@bufbuild/protobuf";
import { CallMethod, EpisodeSchema, Outcome, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { FaultKind } from "../../gen/modelstub/v1/episode_pb.js";
import { codeNames } from "../shared/status-code.js";
import type { ReportCall } from "./report-types.js";

/** An episode as `modelstub episode` prints it (protobuf JSON, proto field names). */
export function episodeJson(episode: Episode): string {
  return `${toJsonString(EpisodeSchema, episode, { prettySpaces: 2, useProtoFieldName: true })}\n`;
}

/** The episode's calls for the report's timeline, each with the start of COMMAND that made it. */
export function reportCalls(episode: Episode, restartOf: ReadonlyMap<number, number>): ReportCall[] {
  return episode.calls.map((c) => {
    const sequence = Number(c.sequence);
    const code = c.status?.code ?? 0;
    return {
      sequence,
      step: c.stepId,
      method: c.method === CallMethod.GENERATE_STREAM ? "stream" : "generate",
      outcome: `OUTCOME_${Outcome[c.outcome]}`,
      ...(code !== 0 ? { status: codeNames[code] ?? String(code) } : {}),
      entry: c.entry,
      startMs: Number(c.startMs),
      endMs: Number(c.endMs),
      ...(c.fault ? { fault: { rule: c.fault.rule, kind: `FAULT_KIND_${FaultKind[c.fault.kind]}` } } : {}),
      restart: restartOf.get(sequence) ?? 0,
    };
  });
}
