import type { z } from "zod";
import { nearestName } from "./nearest-name.js";

/** A validation problem at a path of the input, before it is located in the file. */
export interface PathIssue {
  path: (string | number)[];
  /** For a problem with a key itself (unknown, misspelt): the key, so the locator points at it. */
  key?: string;
  /** Text inside the node's source to point at (a `{{variable}}` in a long reply). */
  needle?: string;
  message: string;
  hint?: string;
}

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;
type Def = Record<string, unknown> & { type: string };

/** What a value is, in the words an error message uses. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value === "number" ? "the number" : typeof value === "boolean" ? "the value" : "a"} ${String(value)}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const seg of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

const defOf = (s: AnySchema) => s._zod.def as unknown as Def;

/** The schema with optional/default/readonly/pipe wrappers taken off. */
function unwrap(schema: AnySchema): AnySchema {
  const def = defOf(schema);
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "readonly":
      return unwrap(def["innerType"] as AnySchema);
    case "pipe":
      return unwrap(def["in"] as AnySchema);
    default:
      return schema;
  }
}

/**
 * Answers of schemasAt by schema and path shape (list indexes as #). A script with 40,000
 * mistakes asks the same few questions 40,000 times; cached, explaining them takes a fraction
 * of the time. The answers depend on the schema alone, so the cache never goes stale.
 */
const schemasAtCache = new WeakMap<AnySchema, Map<string, AnySchema[]>>();

/** Every schema (unions spread out) that can sit at `path` below `schema`. */
function schemasAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
  let cache = schemasAtCache.get(schema);
  if (!cache) schemasAtCache.set(schema, (cache = new Map()));
  const shape = path.map((p) => (typeof p === "number" ? "#" : JSON.stringify(String(p)))).join(",");
  let found = cache.get(shape);
  if (!found) {
    // Step ids are free text: bounded, so a long-running server loading scripts cannot grow it.
    if (cache.size >= 10_000) cache.clear();
    cache.set(shape, (found = findSchemasAt(schema, path)));
  }
  return found;
}

function findSchemasAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === "union") return (def["options"] as AnySchema[]).flatMap((o) => schemasAt(o, path));
  if (path.length === 0) return [s];
  switch (def.type) {
    case "array":
      return typeof path[0] === "number" ? schemasAt(def["element"] as AnySchema, path.slice(1)) : [];
    case "record":
      return schemasAt(def["valueType"] as AnySchema, path.slice(1));
    case "object": {
      const next = (def["shape"] as Record<string, AnySchema>)[String(path[0])];
      return next ? schemasAt(next, path.slice(1)) : [];
    }
    default:
      return [];
  }
}

function keysOf(schemas: AnySchema[]): string[] {
  const keys = schemas.flatMap((s) => (defOf(s).type === "object" ? Object.keys(defOf(s)["shape"] as object) : []));
  return [...new Set(keys)];
}

/** A value's kind in the terms schemas use. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** What a schema accepts, in words: `a text`, `a whole number`, `one of "a", "b"`. */
function expectedWords(schema: AnySchema): string {
  const s = unwrap(schema);
  const def = defOf(s);
  switch (def.type) {
    case "string":
      return "a text";
    case "number":
      return def["format"] ? "a whole number" : "a number";
    case "boolean":
      return "true or false";
    case "array":
      return "a list";
    case "object":
    case "record":
      return "a mapping";
    case "enum":
      return `one of ${Object.values(def["entries"] as object).map((v) => JSON.stringify(v)).join(", ")}`;
    case "literal":
      return (def["values"] as unknown[]).map((v) => JSON.stringify(v)).join(" or ");
    case "union":
      return [...new Set((def["options"] as AnySchema[]).map(expectedWords))].join(", or ");
    default:
      return def.type;
  }
}

/** The description of the field at `path` (its own, or that of the schema it wraps), for hints. */
function descriptionAt(schema: AnySchema, path: readonly (string | number)[]): string | undefined {
  if (path.length === 0) return undefined;
  const last = path[path.length - 1]!;
  for (const parent of schemasAt(schema, path.slice(0, -1))) {
    const d = defOf(parent);
    let field: AnySchema | undefined =
      d.type === "object" ? (d["shape"] as Record<string, AnySchema>)[String(last)] : d.type === "array" ? (d["element"] as AnySchema) : d.type === "record" ? (d["valueType"] as AnySchema) : undefined;
    while (field) {
      const text = (field as { description?: string }).description;
      if (text) return text;
      const fd = defOf(field);
      field = (fd["innerType"] ?? fd["in"]) as AnySchema | undefined;
    }
  }
  return undefined;
}

/** Which value kinds a schema accepts at all (a union's branches that fit the value). */
function acceptsKind(schema: AnySchema, kind: string): boolean {
  const def = defOf(unwrap(schema));
  switch (def.type) {
    case "string":
    case "enum":
      return kind === "string";
    case "number":
      return kind === "number";
    case "boolean":
      return kind === "boolean";
    case "literal":
      return (def["values"] as unknown[]).some((v) => kindOf(v) === kind);
    case "array":
      return kind === "array";
    case "object":
    case "record":
      return kind === "object";
    case "union":
      return (def["options"] as AnySchema[]).some((o) => acceptsKind(o, kind));
    default:
      return true;
  }
}

/** Hints for the usual YAML type slips: `reply: 42`, `times: "2"`, `ignore_case: "yes"`. */
function typeHint(expected: string, value: unknown, path: readonly (string | number)[]): string | undefined {
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
  ms: "ms", msec: "ms", msecs: "ms", millis: "ms", millisecond: "ms", milliseconds: "ms",
  s: "s", sec: "s", secs: "s", second: "s", seconds: "s",
  m: "m", min: "m", mins: "m", minute: "m", minutes: "m",
};

/** `30 sec` -> `30s`: the duration the user most likely meant, when there is one. */
function durationHint(value: unknown): string {
  const m = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$/.exec(value) : null;
  const unit = m ? durationUnits[m[2]!.toLowerCase()] : undefined;
  return unit ? `did you mean ${m![1]}${unit}?` : "units are ms, s and m; a bare number is milliseconds";
}

/**
 * Texts longer than this are never taken for a misspelt key or value: every key and value of
 * the format is far shorter, and an edit distance costs the product of the lengths (a script
 * of 3,000 keys of 300 characters took 16 s to explain before this bound).
 */
const longestGuess = 40;

/** The name a misspelt key most likely meant: near in edits, or an abbreviation (`args`). */
function likelyKey(key: string, allowed: readonly string[]): string | undefined {
  if (key.length > longestGuess) return undefined;
  const near = nearestName(key, allowed);
  if (near) return near;
  const lower = key.toLowerCase();
  if (lower.length < 3) return undefined;
  // `args` for `arguments` (an abbreviation), `entry` for `entries` (a long shared start).
  const abbreviates = (a: string) => a.startsWith(lower.slice(0, 2)) && isSubsequence(lower, a);
  const sharesStart = (a: string) => commonPrefix(lower, a) >= Math.max(4, Math.ceil(lower.length / 2));
  const hits = allowed.filter((a) => abbreviates(a) || sharesStart(a));
  return hits.length === 1 ? hits[0] : undefined;
}

function isSubsequence(short: string, long: string): boolean {
  let i = 0;
  for (const c of long) if (c === short[i]) i++;
  return i === short.length;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
}

/**
 * A union failed. Explain the branch that fits the value's kind (a mapping given for a
 * mapping-or-text reply is explained as a mapping: "unknown key `txt`" helps, "expected a
 * text or a mapping" does not). Undefined when no branch fits, so the union's summary is said.
 */
function unionBranch(issue: Extract<Issue, { code: "invalid_union" }>, options: AnySchema[], value: unknown): Issue[] | undefined {
  const kind = kindOf(value);
  const fitting = issue.errors.filter((branch, i) => {
    const option = options[i];
    if (option && !acceptsKind(option, kind)) return false;
    return !branch.some((b) => b.path.length === 0 && b.code === "invalid_type");
  });
  if (fitting.length === 0) return undefined;
  return fitting.reduce((a, b) => (b.length < a.length ? b : a));
}

function unionOptions(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
  // schemasAt spreads unions; walk to the parent and take the field's own union options.
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1];
  const direct = path.length === 0 ? [unwrap(schema)] : schemasAt(schema, parentPath).flatMap((p) => {
    const d = defOf(p);
    if (d.type === "object") {
      const f = (d["shape"] as Record<string, AnySchema>)[String(last)];
      return f ? [unwrap(f)] : [];
    }
    if (d.type === "array") return [unwrap(d["element"] as AnySchema)];
    if (d.type === "record") return [unwrap(d["valueType"] as AnySchema)];
    return [];
  });
  return direct.flatMap((u) => (defOf(u).type === "union" ? (defOf(u)["options"] as AnySchema[]) : []));
}

/**
 * How many "did you mean" searches one script gets. Past them an unknown key or value is still
 * reported, with the plain hint (the allowed keys, the field's description): a script with
 * thousands of mistakes shows only the first ones anyway, and must not take seconds to explain.
 */
const guessBudget = 100;

/** Turns zod's issues into path issues with messages and hints a person can act on. */
export function explainZodIssues(
  issues: readonly Issue[],
  input: unknown,
  schema: AnySchema,
  base: PropertyKey[] = [],
  budget = { guesses: guessBudget },
): PathIssue[] {
  const out: PathIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path] as (string | number)[];
    const value = valueAt(input, path);
    const got = describeValue(value);
    const last = path[path.length - 1];
    switch (issue.code) {
      case "invalid_union": {
        const options = unionOptions(schema, path);
        const branch = unionBranch(issue, options, value);
        if (branch) {
          out.push(...explainZodIssues(branch, input, schema, path, budget));
          break;
        }
        const expected = options.length ? options.map(expectedWords).join(", or ") : "";
        const said = issue.message && issue.message !== "Invalid input" ? issue.message : `expected ${expected}`;
        out.push({ path, message: `${said}, got ${got}`, hint: typeHint(expected, value, path) });
        break;
      }
      case "unrecognized_keys": {
        const here = schemasAt(schema, path).filter((s) => defOf(s).type === "object");
        const allowed = keysOf(here);
        for (const key of issue.keys) {
          const hint = budget.guesses-- > 0 ? unknownKeyHint(key, allowed, schema, path) : allowed.length ? `allowed keys here: ${allowed.join(", ")}` : undefined;
          out.push({ path, key, message: path.length ? `unknown key \`${key}\`` : `unknown top-level key \`${key}\``, hint });
        }
        break;
      }
      case "invalid_type": {
        if (path.length === 0) {
          out.push({
            path,
            message: `a script is a mapping with \`entries:\` or \`steps:\`, got ${got}`,
            hint: Array.isArray(value) ? "put the list under `entries:`" : "start the file with `entries:` and a list of replies",
          });
          break;
        }
        const here = schemasAt(schema, path);
        const expected = here.length ? [...new Set(here.map(expectedWords))].join(", or ") : issue.expected;
        if (value === undefined) {
          out.push({ path, message: `is required: expected ${expected}`, hint: `add \`${String(last)}:\` to this mapping` });
        } else {
          out.push({ path, message: `expected ${expected}, got ${got}`, hint: typeHint(expected, value, path) });
        }
        break;
      }
      case "invalid_value": {
        const values = issue.values;
        const near = typeof value === "string" && value.length <= longestGuess && budget.guesses-- > 0 ? nearestName(value, values.map(String)) : undefined;
        const single = values.length === 1;
        let hint: string | undefined = near ? `did you mean ${JSON.stringify(near)}?` : undefined;
        if (single && values[0] === true) hint = `write \`${String(last)}: true\`, or remove the key`;
        else if (last === "version") hint = "1 is the only version of the format so far";
        else if (!hint && typeof value === "string" && values.some((v) => String(v).toLowerCase() === value.toLowerCase())) hint = "values are case-sensitive";
        out.push({ path, message: `expected ${single ? JSON.stringify(values[0]) : `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`}, got ${got}`, hint });
        break;
      }
      case "too_small": {
        if (issue.origin === "array") {
          out.push({ path, message: `needs at least ${issue.minimum} item${issue.minimum === 1 ? "" : "s"}`, hint: "give an item, or remove the key" });
        } else if (issue.origin === "string") {
          out.push({ path, message: "must not be empty", hint: `give ${String(last)} a value` });
        } else {
          const bound = issue.inclusive ? `at least ${issue.minimum}` : `more than ${issue.minimum}`;
          const duration = durationKeys.has(String(last));
          const hint = duration ? "a duration cannot be negative; use 0 for no wait" : last === "times" ? "times counts uses: 1 or more; repeat: true for no limit" : undefined;
          out.push({ path, message: `must be ${bound}, got ${got}`, hint });
        }
        break;
      }
      case "too_big":
        out.push({ path, message: `must be at most ${issue.maximum}, got ${got}`, hint: tooBigHints[String(last)] });
        break;
      case "invalid_format": {
        const duration = issue.message.includes("duration");
        out.push({ path, message: `${issue.message.replace(/^Invalid string: /, "")}, got ${got}`, hint: duration ? durationHint(value) : undefined });
        break;
      }
      case "invalid_key": {
        const key = String(last);
        const inner = issue.issues[0]?.message ?? "this key is not allowed";
        const parent = path.slice(0, -1);
        const lowered = key.toLowerCase();
        const fixed = /^[a-z][a-z0-9._-]*$/.test(lowered) ? lowered : undefined;
        out.push({ path: parent, key, message: `key \`${key}\` is not allowed: ${inner}`, hint: fixed ? `write \`${fixed}\`` : undefined });
        break;
      }
      default:
        out.push({ path, message: `${issue.message}, got ${got}` });
    }
  }
  // A message without a better hint gets the field's own description: it says what the field is for.
  for (const o of out) {
    if (o.hint === undefined && o.key === undefined) {
      const d = descriptionAt(schema, o.path);
      if (d) o.hint = (/^[A-Z][a-z]/.test(d) ? d[0]!.toLowerCase() + d.slice(1) : d).replace(/\.$/, "");
      else delete o.hint;
    }
  }
  return dropRequiredThatWereMisspelt(out);
}

const durationKeys = new Set(["latency", "first_byte", "per_chunk"]);

/** Why a number has its maximum: the proto field it travels in (proto/modelstub/v1/*.proto). */
const tooBigHints: Record<string, string> = {
  code: "gRPC status codes run from 1 to 16; a name like UNAVAILABLE reads better",
  input_tokens: "input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range",
  output_tokens: "input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range",
  context_length: "ListModels sends it as modelstub.v1.Model.context_length, a uint32",
  times: "VerifySession reports the uses left as a uint32; for an entry that never runs out, write repeat: true",
  after_chunks: "episodes record the chunks sent as a uint32; a reply streams far fewer chunks",
};

/** unknownKeyHint's answers by key and place, for the same slip made on every entry. */
const unknownKeyHints = new WeakMap<AnySchema, Map<string, string | undefined>>();

function unknownKeyHint(key: string, allowed: readonly string[], schema: AnySchema, path: readonly (string | number)[]): string | undefined {
  let cache = unknownKeyHints.get(schema);
  if (!cache) unknownKeyHints.set(schema, (cache = new Map()));
  const at = JSON.stringify([key, path.map((p) => (typeof p === "number" ? "#" : p))]);
  if (!cache.has(at)) {
    if (cache.size >= 10_000) cache.clear();
    cache.set(at, findUnknownKeyHint(key, allowed, schema, path));
  }
  return cache.get(at);
}

function findUnknownKeyHint(key: string, allowed: readonly string[], schema: AnySchema, path: readonly (string | number)[]): string | undefined {
  const innerKeys = allowed.map((field) => [field, keysOf(schemasAt(schema, [...path, field]).filter((s) => defOf(s).type === "object"))] as const);
  // A key one level off: `text` or `chunking` written on the entry instead of under `reply:`.
  // An exact key of a nested field says more than a near miss here or there (`chunking` is
  // not a misspelt `chunks_per_second` of `latency:`).
  const exact = innerKeys.find(([, inner]) => inner.includes(key));
  if (exact) return `\`${key}\` goes under \`${exact[0]}:\``;
  const near = likelyKey(key, allowed);
  if (near) return `did you mean \`${near}\`?`;
  if (likelyKey(key, ["on_exhausted"]) && allowed.includes("reply")) {
    return "on_exhausted is set per list, `entries: {on_exhausted: cycle, entries: [...]}`, or for all lists under `defaults:`";
  }
  // A near miss one level off, or `latency` written under `reply:` instead of on the entry.
  for (const [field, inner] of innerKeys) {
    const hit = likelyKey(key, inner);
    if (hit) return `\`${hit}\` goes under \`${field}:\``;
  }
  const parentPath = typeof path[path.length - 1] === "number" ? path.slice(0, -2) : path.slice(0, -1);
  const owner = [...path].reverse().find((p) => typeof p === "string");
  if (path.length > 0) {
    const outer = keysOf(schemasAt(schema, parentPath).filter((s) => defOf(s).type === "object"));
    const hit = likelyKey(key, outer);
    if (hit && owner !== undefined) return `\`${hit}\` belongs one level up, beside \`${String(owner)}:\`, not inside it`;
  }
  return allowed.length ? `allowed keys here: ${allowed.join(", ")}` : undefined;
}

/**
 * `entry:` written for `entries:` yields two issues: an unknown key and a missing one. The
 * unknown key's "did you mean" says it all; the "is required" line would only repeat it.
 */
function dropRequiredThatWereMisspelt(issues: PathIssue[]): PathIssue[] {
  const suggested = new Set(
    issues.flatMap((i) => {
      const m = i.key !== undefined && i.hint ? /^did you mean `(.+)`\?$/.exec(i.hint) : null;
      return m ? [JSON.stringify([...i.path, m[1]])] : [];
    }),
  );
  return issues.filter((i) => !(i.message.startsWith("is required") && suggested.has(JSON.stringify(i.path))));
}
