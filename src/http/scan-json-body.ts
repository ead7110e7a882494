import { overLimitMessage } from "../engine/request-limits.js";
import type { BadRequest } from "./refusal.js";

/**
 * The deepest nesting of objects and lists a body may have. A JSON Schema in `parameters` is
 * rarely 20 deep; JSON.parse reads any depth (a 2M-deep body took it seconds), and
 * JSON.stringify (the schema's text) and other recursive walks overflow the stack near 10,000.
 */
export const maxJsonDepth = 128;

/**
 * The most JSON values (objects, lists, strings, numbers, booleans, nulls, at every level) a body
 * may hold: 250,000. The request limits allow about 85,000 protobuf fields of a normal request
 * (engine/request-limits.ts), a few more values in JSON; this bounds what they do not count
 * (content parts, schemas, unknown fields), so that parsing and reading a body costs tens of
 * milliseconds at most, not the seconds 2 million values of a 4 MiB body cost.
 */
export const maxJsonValues = 250_000;

/** A list whose length a dialect bounds (engine/request-limits.ts), by its place in the body. */
export interface ListLimit {
  /** Keys from the top of the body, "*" for any element of a list: `["messages", "*", "tool_calls"]`. */
  path: readonly string[];
  limit: number;
  /** What the list holds, for the message: "messages", "tool calls". */
  what: string;
  /** "in a request" or "in a message". */
  per: string;
  /** A bound on all the lists at `path` together (the tool calls of all messages), and how its refusal reads. */
  total?: { limit: number; field: string; what: string; param: string };
}

/** A dialect's bounded lists; the depth and value bounds hold for every dialect. */
export type BodyLimits = readonly ListLimit[];

enum Want {
  Nothing,
  Value,
  Key,
  Colon,
}

/** Paths in messages stop growing past this many characters. */
const maxPathChars = 120;

/** A key as JSON.parse reads it (escapes decoded); cut when long, so it matches no limit's path. */
function keyText(text: string, start: number, end: number): string {
  if (end - start > 64) return `${text.slice(start, start + 64)}...`;
  const raw = text.slice(start, end);
  if (raw.indexOf("\\") < 0) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** The index of the quote that ends the string opening at `open`, or -1: a quote is escaped when an odd run of backslashes precedes it. */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let b = q - 1;
    while (text.charCodeAt(b) === 92) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    from = q + 1;
  }
}

/**
 * How many more elements the list being read at `from` has after its current one (its commas
 * at its own level), and where it ends; -1 when the text ends first. What the scan does once a
 * list has passed its limit: the message gives the whole count, as the parser's did, at a few
 * operations a character.
 */
function restOfList(text: string, from: number): { more: number; end: number } {
  let depth = 0;
  let more = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      i = stringEnd(text, i);
      if (i < 0) break;
    } else if (c === 91 || c === 123) depth++;
    else if (c === 93 || c === 125) {
      if (depth === 0) return { more, end: i };
      depth--;
    } else if (c === 44 && depth === 0) more++;
  }
  return { more, end: -1 };
}

/**
 * Checks a request body's text against the bounds before JSON.parse reads it: nesting deeper than
 * `maxJsonDepth`, a list of `limits` longer than its limit (or their total past it), more than
 * `maxJsonValues` values. One pass over the characters (a JSON lexer for strings and escapes:
 * brackets inside strings do not count) with a fixed stack and nothing built per value, that
 * stops at the first bound passed: a few milliseconds for 4 MiB, where JSON.parse of a million
 * `{}` and the walks after it took 0.3 to 2.4 s, and of 2 million `[` 3 to 12 s. A body that is
 * not JSON gets undefined (unless a bound was passed before its fault), and JSON.parse says
 * where it is wrong. For a body that is JSON, the verdict is the parser's: the same depth, the
 * same counts.
 */
export function scanJsonBody(text: string, limits: BodyLimits, depthLimit = maxJsonDepth, valuesLimit = maxJsonValues): BadRequest | undefined {
  // One slot per open container; slot d is the container at nesting level d + 1.
  const isList = new Uint8Array(depthLimit);
  const count = new Float64Array(depthLimit);
  const keys: (string | undefined)[] = new Array<string | undefined>(depthLimit);
  // The limits whose path the container's path starts, one bit each, and the limit of a list at one.
  const matches = new Int32Array(depthLimit);
  const limitAt = new Int8Array(depthLimit);
  const totals = new Float64Array(limits.length);
  const everyLimit = (1 << limits.length) - 1;
  let depth = 0;
  let want = Want.Value;
  let values = 0;

  /** Where the value starting now is, like `messages[3].tool_calls` (a list's own path before its first element). */
  const here = (slots: number): string => {
    let path = "";
    for (let d = 0; d < slots; d++) {
      if (path.length > maxPathChars) return `${path}...`;
      path += isList[d] ? `[${count[d]! - 1}]` : `${path ? "." : ""}${keys[d] ?? ""}`;
    }
    return path;
  };
  /** A value starts at `at`: counted, and refused when it passes a bound. */
  const valueStarts = (at: number): BadRequest | undefined => {
    const slot = depth - 1;
    if (slot >= 0 && isList[slot]) {
      const n = ++count[slot]!;
      const li = limitAt[slot]!;
      const l = li >= 0 ? limits[li]! : undefined;
      if (l && n > l.limit) {
        const field = here(slot);
        const rest = restOfList(text, at);
        return { message: overLimitMessage(field, n + rest.more, l.what, l.limit, l.per), param: field, code: "too_many_items" };
      }
      if (l?.total && ++totals[li]! > l.total.limit) {
        const t = l.total;
        return { message: overLimitMessage(t.field, `more than ${t.limit}`, t.what, t.limit, "in a request"), param: t.param, code: "too_many_items" };
      }
    }
    if (++values > valuesLimit) {
      const at = here(depth);
      const what = "JSON values (objects, lists, strings, numbers, booleans and nulls, at every level)";
      return {
        message: `${overLimitMessage("the request body", `more than ${valuesLimit}`, what, valuesLimit, "in a request")}; value ${valuesLimit + 1} is ${at || "the body"}`,
        param: at || null,
        code: "too_many_items",
      };
    }
    return undefined;
  };

  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      i++;
    } else if (c === 34) {
      const end = stringEnd(text, i);
      if (end < 0) break;
      if (want === Want.Key) {
        keys[depth - 1] = keyText(text, i + 1, end);
        want = Want.Colon;
      } else {
        if (want === Want.Value) {
          const refusal = valueStarts(i);
          if (refusal) return refusal;
        }
        want = Want.Nothing;
      }
      i = end + 1;
    } else if (c === 123 || c === 91) {
      if (want !== Want.Value) break;
      const refusal = valueStarts(i);
      if (refusal) return refusal;
      if (depth >= depthLimit) {
        const at = here(depth);
        return {
          message: `the request body nests objects and lists deeper than ${depthLimit} levels (at ${at || "the top"})`,
          param: at || null,
          code: "invalid_value",
        };
      }
      const list = c === 91;
      let m = depth === 0 ? everyLimit : 0;
      let li = -1;
      if (depth > 0 && matches[depth - 1] !== 0) {
        // The parent's bits whose path goes on with this container's key (or "*" in a list).
        const segment = isList[depth - 1] ? "*" : keys[depth - 1];
        const parent = matches[depth - 1]!;
        for (let b = 0; b < limits.length; b++) {
          const path = limits[b]!.path;
          if (!(parent & (1 << b)) || path.length < depth || path[depth - 1] !== segment) continue;
          m |= 1 << b;
          if (list && li < 0 && path.length === depth) li = b;
        }
      }
      isList[depth] = list ? 1 : 0;
      count[depth] = 0;
      keys[depth] = undefined;
      matches[depth] = m;
      limitAt[depth] = li;
      depth++;
      want = list ? Want.Value : Want.Key;
      i++;
    } else if (c === 125 || c === 93) {
      if (depth === 0 || isList[depth - 1] !== (c === 93 ? 1 : 0)) break;
      depth--;
      want = Want.Nothing;
      i++;
    } else if (c === 44) {
      if (depth === 0) break;
      want = isList[depth - 1] ? Want.Value : Want.Key;
      i++;
    } else if (c === 58) {
      want = Want.Value;
      i++;
    } else {
      // A number or true/false/null: its first character starts a value, the rest do nothing.
      if (want === Want.Value) {
        const refusal = valueStarts(i);
        if (refusal) return refusal;
        want = Want.Nothing;
      }
      i++;
    }
  }
  return undefined;
}
