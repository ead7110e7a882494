import { equals, toJson } from "@bufbuild/protobuf";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function walk(a: Json | undefined, b: Json | undefined, path: string): string | undefined {
  if (a === b) return undefined;
  const show = (v: Json | undefined) => (v === undefined ? "(unset)" : JSON.stringify(v));
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = walk(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = walk(a[k], b[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return undefined;
  }
  return `${path || "(root)"}: ${show(a)} != ${show(b)}`;
}

/**
 * The first difference between two episodes, as `calls[2].response.message.content: "a" != "b"`
 * (proto field names, fields in number order), or undefined when they are equal field by
 * field. Equal fields with different bytes mean unknown fields or a non-canonical encoder: the
 * caller compares bytes first and says so.
 */
export function episodeDifference(a: Episode, b: Episode): string | undefined {
  if (equals(EpisodeSchema, a, b)) return undefined;
  const opts = { useProtoFieldName: true } as const;
  return walk(toJson(EpisodeSchema, a, opts) as Json, toJson(EpisodeSchema, b, opts) as Json, "") ?? "the episodes differ in fields JSON does not show";
}
