import type { z } from "zod";
import { kindOf } from "./describe-value.js";

/** One issue zod reports. */
export type Issue = z.core.$ZodIssue;
/** Any zod schema, as the walk below sees it. */
export type AnySchema = z.core.$ZodType;
type Def = Record<string, unknown> & { type: string };

/** A schema's definition, read as a plain record. */
export const defOf = (s: AnySchema) => s._zod.def as unknown as Def;

/** The schema with optional/default/readonly/pipe wrappers taken off. */
export function unwrap(schema: AnySchema): AnySchema {
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
export function schemasAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
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

/** The keys the object schemas among `schemas` allow, each once. */
export function keysOf(schemas: AnySchema[]): string[] {
  const keys = schemas.flatMap((s) => (defOf(s).type === "object" ? Object.keys(defOf(s)["shape"] as object) : []));
  return [...new Set(keys)];
}

/** What a schema accepts, in words: `a text`, `a whole number`, `one of "a", "b"`. */
export function expectedWords(schema: AnySchema): string {
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
      return `one of ${Object.values(def["entries"] as object)
        .map((v) => JSON.stringify(v))
        .join(", ")}`;
    case "literal":
      return (def["values"] as unknown[]).map((v) => JSON.stringify(v)).join(" or ");
    case "union":
      return [...new Set((def["options"] as AnySchema[]).map(expectedWords))].join(", or ");
    default:
      return def.type;
  }
}

/** The description of the field at `path` (its own, or that of the schema it wraps), for hints. */
export function descriptionAt(schema: AnySchema, path: readonly (string | number)[]): string | undefined {
  if (path.length === 0) return undefined;
  const last = path[path.length - 1]!;
  for (const parent of schemasAt(schema, path.slice(0, -1))) {
    const d = defOf(parent);
    let field: AnySchema | undefined =
      d.type === "object"
        ? (d["shape"] as Record<string, AnySchema>)[String(last)]
        : d.type === "array"
          ? (d["element"] as AnySchema)
          : d.type === "record"
            ? (d["valueType"] as AnySchema)
            : undefined;
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
export function acceptsKind(schema: AnySchema, kind: string): boolean {
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

/** The options of the union that sits at `path` below `schema` (none when it is no union). */
export function unionOptions(schema: AnySchema, path: readonly PropertyKey[]): AnySchema[] {
  // schemasAt spreads unions; walk to the parent and take the field's own union options.
  const parentPath = path.slice(0, -1);
  const last = path[path.length - 1];
  const direct =
    path.length === 0
      ? [unwrap(schema)]
      : schemasAt(schema, parentPath).flatMap((p) => {
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
