import { readFile, readdir } from "node:fs/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { schema as schemaCommand, scriptJsonSchema } from "../../src/cli/schema.js";

/*
 * No JSON Schema validator is installed (no ajv in node_modules), so this file carries a
 * small one for exactly the draft 2020-12 keywords the output uses. It refuses any keyword it
 * does not know, so a change in zod's output cannot slip past it unchecked.
 */

type Schema = Record<string, unknown>;
const annotations = new Set(["$schema", "$id", "title", "description"]);

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Problems of `value` against `schema`, as "path: keyword" strings; [] when it is valid. */
function check(schema: Schema | boolean, value: unknown, path = "$"): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: false`];
  const errors: string[] = [];
  for (const [k, rule] of Object.entries(schema)) {
    if (annotations.has(k)) continue;
    const fail = () => errors.push(`${path}: ${k}`);
    switch (k) {
      case "type": {
        const types = Array.isArray(rule) ? (rule as string[]) : [rule as string];
        const t = typeOf(value);
        if (!types.includes(t) && !(t === "integer" && types.includes("number"))) fail();
        break;
      }
      case "enum":
        if (!(rule as unknown[]).includes(value)) fail();
        break;
      case "const":
        if (rule !== value) fail();
        break;
      case "pattern":
        if (typeof value === "string" && !new RegExp(rule as string, "u").test(value)) fail();
        break;
      case "minLength":
        if (typeof value === "string" && [...value].length < (rule as number)) fail();
        break;
      case "minItems":
        if (Array.isArray(value) && value.length < (rule as number)) fail();
        break;
      case "minimum":
        if (typeof value === "number" && value < (rule as number)) fail();
        break;
      case "maximum":
        if (typeof value === "number" && value > (rule as number)) fail();
        break;
      case "exclusiveMinimum":
        if (typeof value === "number" && value <= (rule as number)) fail();
        break;
      case "anyOf":
        if (!(rule as Schema[]).some((s) => check(s, value, path).length === 0)) fail();
        break;
      case "items":
        if (Array.isArray(value))
          value.forEach((v, i) => {
            errors.push(...check(rule as Schema, v, `${path}[${i}]`));
          });
        break;
      case "required":
        if (typeOf(value) === "object") for (const r of rule as string[]) if (!(r in (value as object))) errors.push(`${path}.${r}: required`);
        break;
      case "properties":
      case "additionalProperties":
      case "propertyNames": {
        if (typeOf(value) !== "object") break;
        const props = (schema["properties"] ?? {}) as Record<string, Schema>;
        for (const [key, v] of Object.entries(value as object)) {
          if (k === "properties" && key in props) errors.push(...check(props[key]!, v, `${path}.${key}`));
          if (k === "additionalProperties" && !(key in props)) errors.push(...check(rule as Schema | boolean, v, `${path}.${key}`));
          if (k === "propertyNames") errors.push(...check(rule as Schema, key, `${path}{${key}}`));
        }
        break;
      }
      case "$defs":
        break;
      default:
        throw new Error(`the test's validator does not know the keyword ${k} (at ${path})`);
    }
  }
  return errors;
}

/** Every subschema, with its JSON pointer. */
function* subschemas(s: unknown, at = "#"): Generator<[string, Schema]> {
  if (s === null || typeof s !== "object") return;
  if (Array.isArray(s)) {
    for (const [i, v] of s.entries()) yield* subschemas(v, `${at}/${i}`);
    return;
  }
  yield [at, s as Schema];
  for (const [k, v] of Object.entries(s)) if (k !== "enum" && k !== "const" && k !== "required") yield* subschemas(v, `${at}/${k}`);
}

const schema = scriptJsonSchema();
const examples = new URL("../../examples/", import.meta.url);
const badScripts = new URL("../fixtures/bad-scripts/", import.meta.url);
const parseFile = async (url: URL) => parse(await readFile(url, "utf8")) as unknown;

describe("modelstub schema", () => {
  afterEach(() => vi.restoreAllMocks());

  it("prints the JSON Schema as JSON, exits 0", async () => {
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
    const code = await schemaCommand([]);
    vi.restoreAllMocks();
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual(schema);
  });

  it("declares draft 2020-12, an id, a title and a description", () => {
    expect(schema["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema).toMatchObject({ $id: "urn:modelstub:schema:script", title: "modelstub script", description: "A modelstub script.", type: "object" });
  });

  it("accepts every example script", async () => {
    const files = (await readdir(examples, { withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(check(schema, await parseFile(new URL(f, examples))), f).toEqual([]);
  });

  it.each([
    ["unknown-key-latncy.yaml", "$.entries: anyOf"],
    ["unknown-key-top-level.yaml", "$.entires: false"],
    ["times-not-a-number.yaml", "$.entries: anyOf"],
    ["unknown-status-code.yaml", "$.entries: anyOf"],
    ["duration-with-words.yaml", "$.entries: anyOf"],
    ["trailer-with-capitals.yaml", "$.entries: anyOf"],
    ["top-level-list.yaml", "$: type"],
    ["version-two.yaml", "$.version: const"],
    ["steps-as-list.yaml", "$.steps: type"],
  ])("rejects the bad script %s", async (name, first) => {
    expect(check(schema, await parseFile(new URL(name, badScripts)))).toContain(first);
  });

  it("closes every mapping: unknown keys are errors in the editor too", () => {
    for (const [at, s] of subschemas(schema)) {
      if (s["type"] !== "object") continue;
      // Only the free-form mappings take any key: step ids, trailer names, tool call arguments.
      if (at.endsWith("/steps") || at.endsWith("/trailers") || at.endsWith("/arguments/anyOf/1")) expect(s["additionalProperties"], at).not.toBe(false);
      else expect(s["additionalProperties"], at).toBe(false);
    }
  });

  it("lists the allowed values of every enumerated field", () => {
    const enums = [...subschemas(schema)].flatMap(([, s]) => (Array.isArray(s["enum"]) ? [s["enum"] as string[]] : []));
    expect(enums).toContainEqual(["fail", "repeat-last", "cycle"]);
    expect(enums).toContainEqual(["stop", "length", "tool_calls", "content_filter"]);
    expect(enums).toContainEqual(["error", "hang", "drop"]);
    expect(enums).toContainEqual(["words", "none"]);
    expect(enums.find((e) => e.includes("UNAVAILABLE"))).toHaveLength(16);
  });

  it("describes every property an editor shows, and leaves no untyped hole but the arguments' values", () => {
    for (const [at, s] of subschemas(schema)) {
      if (Object.keys(s).length === 0) expect(at, "an untyped {}").toMatch(/\/arguments\/anyOf\/1\/additionalProperties$/);
      const props = s["properties"] as Record<string, Schema> | undefined;
      for (const [key, p] of Object.entries(props ?? {})) {
        if (!at.includes("/models/")) expect(p["description"], `${at}/properties/${key}`).toEqual(expect.any(String));
      }
    }
  });
});
