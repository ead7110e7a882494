import { kindOf } from "./describe-value.js";

/** Hints for the usual YAML type slips: `reply: 42`, `times: "2"`, `ignore_case: "yes"`. */
export function typeHint(expected: string, value: unknown, path: readonly (string | number)[]): string | undefined {
  const kind = kindOf(value);
  if (kind === "null") return "the key has no value: write one after the colon, or remove the key";
  if (expected.includes("a text") && (kind === "number" || kind === "boolean")) return `quote it to make it a text: "${String(value)}"`;
  if (expected.includes("a text") && kind === "array") return "a text that starts with [ is read as a list: quote the whole text";
  if (expected.includes("a text") && kind === "object") return 'a text that starts with { or contains ": " is read as a mapping: quote the whole text';
  if (expected.includes("number") && kind === "string") {
    const text = (value as string).trim();
    return /^\d+(\.\d+)?$/.test(text) ? `remove the quotes: ${text}` : `write a number, like ${path[path.length - 1] === "times" ? 2 : 100}`;
  }
  if (expected.includes("true or false") && kind === "string") return "write true or false, without quotes";
  if (expected.includes("a list") && kind === "object") return "start each item of a list with `- `";
  if (expected.includes("a mapping") && kind === "array") return "remove the `- `: this is a mapping of keys, not a list";
  return undefined;
}

const durationUnits: Record<string, string> = {
  ms: "ms",
  msec: "ms",
  msecs: "ms",
  millis: "ms",
  millisecond: "ms",
  milliseconds: "ms",
  s: "s",
  sec: "s",
  secs: "s",
  second: "s",
  seconds: "s",
  m: "m",
  min: "m",
  mins: "m",
  minute: "m",
  minutes: "m",
};

/** `30 sec` -> `30s`: the duration the user most likely meant, when there is one. */
export function durationHint(value: unknown): string {
  const m = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$/.exec(value) : null;
  const unit = m ? durationUnits[m[2]!.toLowerCase()] : undefined;
  return unit ? `did you mean ${m![1]}${unit}?` : "units are ms, s and m; a bare number is milliseconds";
}

/** Keys whose value is a duration: a number too small there is a negative wait. */
export const durationKeys = new Set(["latency", "first_byte", "per_chunk"]);

/** Why a number has its maximum: the proto field it travels in (proto/modelstub/v1/*.proto). */
export const tooBigHints: Record<string, string> = {
  code: "gRPC status codes run from 1 to 16; a name like UNAVAILABLE reads better",
  input_tokens: "input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range",
  output_tokens: "input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range",
  context_length: "ListModels sends it as modelstub.v1.Model.context_length, a uint32",
  times: "VerifySession reports the uses left as a uint32; for an entry that never runs out, write repeat: true",
  after_chunks: "episodes record the chunks sent as a uint32; a reply streams far fewer chunks",
};
