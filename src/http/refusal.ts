import { overLimitMessage, requestLimits } from "../engine/request-limits.js";

// The request-shape checks of parseChatRequest (parse-chat-request.ts): each reads one field of
// the body as the type it must have, or throws a Refusal naming the field and OpenAI's error code.

/** Why a request body was refused: the parts of an OpenAI error body. */
export interface BadRequest {
  message: string;
  /** The field at fault, like `messages[1].role`; null for the body as a whole. */
  param: string | null;
  /** OpenAI's vocabulary: invalid_json, missing_required_parameter, invalid_type, invalid_value. */
  code: string;
}

/** Thrown inside the parser only; parseChatRequest returns it as data. */
export class Refusal extends Error {
  constructor(readonly bad: BadRequest) {
    super(bad.message);
  }
}

/** How a refusal names the kind of value it got: "null", "a list", "a number (3)", ... */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return "a string";
  return `${typeof v === "number" ? "a number" : typeof v === "boolean" ? "a boolean" : typeof v} (${JSON.stringify(v)})`;
}

/** Refuses a field of the wrong type (invalid_type). */
export function wrongType(param: string, expected: string, got: unknown): never {
  throw new Refusal({ message: `${param}: expected ${expected}, got ${kindOf(got)}`, param, code: "invalid_type" });
}

/** Refuses a request without a field it needs (missing_required_parameter). */
export function missing(param: string, what: string): never {
  throw new Refusal({ message: `${param} is required: ${what}`, param, code: "missing_required_parameter" });
}

/** Refuses a field of the right type but a value modelstub does not take (invalid_value). */
export function invalid(param: string, message: string): never {
  throw new Refusal({ message: `${param}: ${message}`, param, code: "invalid_value" });
}

/** Refuses a list longer than a request limit (engine/request-limits.ts), with the gRPC side's message. */
export function limitCount(field: string, count: number, what: string, limit: number, per: string, param: string | null = field): void {
  if (count > limit) throw new Refusal({ message: overLimitMessage(field, count, what, limit, per), param, code: "too_many_items" });
}

/** A JSON object of the body. */
export type Obj = Record<string, unknown>;

/** Whether a JSON value is an object (not null, not a list). */
export function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value at `param` as an object, else a refusal. */
export function objectAt(v: unknown, param: string): Obj {
  if (!isObject(v)) wrongType(param, "an object", v);
  return v;
}

/** The value at `param` as a string, else a refusal. */
export function stringAt(v: unknown, param: string): string {
  if (typeof v !== "string") wrongType(param, "a string", v);
  return v;
}

/** An optional field: absent and null both mean "not sent", as in OpenAI's API. */
export function optional<T>(o: Obj, key: string, read: (v: unknown, param: string) => T, param = key): T | undefined {
  const v = o[key];
  return v === undefined || v === null ? undefined : read(v, param);
}

/** The value at `param` as a finite number, else a refusal. */
export function numberAt(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) wrongType(param, "a number", v);
  return v;
}

/** The value at `param` as a whole number that fits a proto uint32, else a refusal. */
export function uint32At(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isInteger(v)) wrongType(param, "a whole number", v);
  if (v < 0 || v > 0xffffffff) invalid(param, `expected a whole number from 0 to 4294967295, got ${v}`);
  return v;
}

/** The value at `param` as a seed: a safe whole number, as a bigint for the proto's int64. */
export function seedAt(v: unknown, param: string): bigint {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) wrongType(param, "a whole number", v);
  return BigInt(v);
}

/** The value at `param` as true or false, else a refusal. */
export function booleanAt(v: unknown, param: string): boolean {
  if (typeof v !== "boolean") wrongType(param, "true or false", v);
  return v;
}

/** The value at `param` as a list of stop sequences (Anthropic's `stop_sequences`, Gemini's `stopSequences`), within the request limit. */
export function stopSequencesAt(v: unknown, param: string): string[] {
  if (!Array.isArray(v)) wrongType(param, "a list of strings", v);
  limitCount(param, v.length, "stop sequences", requestLimits.stopSequences, "in a request");
  return v.map((s, i) => stringAt(s, `${param}[${i}]`));
}
