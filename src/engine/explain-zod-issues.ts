import type { z } from "zod";
import { nearestName } from "./nearest-name.js";

/** A validation problem at a path of the input, before it is located in the file. */
export interface PathIssue {
  path: (string | number)[];
  /** For an unknown key: the key, so the locator can point at the key rather than the map. */
  key?: string;
  message: string;
  hint?: string;
}

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;

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

/** The object schemas reachable at `path`, walking through optionals, unions, arrays and records. */
function objectKeysAt(schema: AnySchema, path: readonly PropertyKey[]): string[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "readonly":
      return objectKeysAt(def["innerType"] as AnySchema, path);
    case "pipe":
      return objectKeysAt(def["in"] as AnySchema, path);
    case "union":
      return (def["options"] as AnySchema[]).flatMap((o) => objectKeysAt(o, path));
    case "array":
      return path.length === 0 ? [] : objectKeysAt(def["element"] as AnySchema, path.slice(1));
    case "record":
      return path.length === 0 ? [] : objectKeysAt(def["valueType"] as AnySchema, path.slice(1));
    case "object": {
      const shape = def["shape"] as Record<string, AnySchema>;
      if (path.length === 0) return Object.keys(shape);
      const next = shape[String(path[0])];
      return next ? objectKeysAt(next, path.slice(1)) : [];
    }
    default:
      return [];
  }
}

/**
 * A union failed. When the input plainly meant one branch (its issues are deeper than "wrong
 * type here"), explain that branch's issues instead of the union's summary: "unknown key
 * `txt`" helps, "expected a text or a mapping" does not.
 */
function unionBranch(issue: Extract<Issue, { code: "invalid_union" }>): Issue[] | undefined {
  const meant = issue.errors.filter((branch) => branch.some((i) => i.path.length > 0 || i.code !== "invalid_type"));
  if (meant.length === 0) return undefined;
  return meant.reduce((a, b) => (b.length < a.length ? b : a));
}

/** Turns zod's issues into path issues with messages and hints a person can act on. */
export function explainZodIssues(issues: readonly Issue[], input: unknown, schema: AnySchema, base: PropertyKey[] = []): PathIssue[] {
  const out: PathIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path] as (string | number)[];
    const got = describeValue(valueAt(input, path));
    switch (issue.code) {
      case "invalid_union": {
        const branch = unionBranch(issue);
        if (branch) out.push(...explainZodIssues(branch, input, schema, path));
        else out.push({ path, message: `${issue.message}, got ${got}` });
        break;
      }
      case "unrecognized_keys":
        for (const key of issue.keys) {
          const allowed = objectKeysAt(schema, path);
          const near = nearestName(key, allowed);
          out.push({
            path,
            key,
            message: `unknown key \`${key}\``,
            hint: near ? `did you mean \`${near}\`?` : allowed.length ? `allowed keys here: ${allowed.join(", ")}` : undefined,
          });
        }
        break;
      case "invalid_type":
        out.push({
          path,
          message: got === "nothing" ? `is required (expected ${issue.expected})` : `expected ${issue.expected === "int" ? "a whole number" : issue.expected}, got ${got}`,
        });
        break;
      case "invalid_value":
        out.push({
          path,
          message: `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${got}`,
          hint: typeof valueAt(input, path) === "string"
            ? (() => {
                const near = nearestName(String(valueAt(input, path)), issue.values.map(String));
                return near ? `did you mean ${JSON.stringify(near)}?` : undefined;
              })()
            : undefined,
        });
        break;
      case "too_small":
        out.push({
          path,
          message:
            issue.origin === "array"
              ? `needs at least ${issue.minimum} item${issue.minimum === 1 ? "" : "s"}`
              : issue.origin === "string"
                ? `must not be empty`
                : `must be at least ${issue.minimum}, got ${got}`,
        });
        break;
      case "too_big":
        out.push({ path, message: `must be at most ${issue.maximum}, got ${got}` });
        break;
      case "invalid_format":
        out.push({ path, message: `${issue.message.replace(/^Invalid string: /, "")}, got ${got}` });
        break;
      default:
        out.push({ path, message: `${issue.message}, got ${got}` });
    }
  }
  return out;
}
