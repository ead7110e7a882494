import { describe, expect, it } from "vitest";
import { defaultScriptInput } from "../../src/script/default-script-input.js";
import { defaultScript, defaultScriptFile, defaultScriptText } from "../../src/script/default-script.js";
import { loadScriptText, validatedScriptInput } from "../../src/script/load-script.js";

/** A compiled script's data, its functions marked by name and its maps as entries, for comparison. */
function shape(value: unknown): unknown {
  if (typeof value === "function") return `[function ${value.name}]`;
  if (value instanceof Map) return { map: [...value].map(([k, v]) => [k, shape(v)]) };
  if (Array.isArray(value)) return value.map(shape);
  if (value instanceof RegExp) return `[regexp ${value.source} ${value.flags}]`;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
}

// serve compiles the default script from its validated form, skipping YAML and the schema: these
// keep that the very script the text compiles to.
describe("the built-in default script's validated form", () => {
  it("is what loading the text validates to, exactly (update default-script-input.ts when the text changes)", () => {
    expect(defaultScriptInput()).toStrictEqual(validatedScriptInput(defaultScriptText, defaultScriptFile));
  });

  it("compiles to the same script as the text does", () => {
    const fromText = loadScriptText(defaultScriptText, defaultScriptFile);
    const fromInput = defaultScript();
    expect(shape(fromInput)).toStrictEqual(shape(fromText));
    expect(fromInput.name).toBe("default");
    expect(fromInput.entryCount).toBe(9);
  });

  it("is a fresh object on every call, so nothing compiled from one can change the next", () => {
    expect(defaultScriptInput()).not.toBe(defaultScriptInput());
  });
});
