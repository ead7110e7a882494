import { findJsonError } from "./find-json-error.js";
import { compileTemplate, type CaptureInfo } from "./compile-template.js";
import type { CompiledToolCall, TemplateContext } from "./compiled-script.js";

/** A value JSON-escaped, without its quotes: what goes between the quotes of a JSON string. */
const jsonEscape = (value: string) => JSON.stringify(value).slice(1, -1);

/**
 * Checks arguments written as a JSON text. Each `{{variable}}` must sit inside a JSON string:
 * its value goes in JSON-escaped, so a quote or a line break in it cannot break the JSON, and
 * the text is valid JSON at load time exactly when it is valid for every value.
 */
function checkArgumentsText(args: string, fail: (path: (string | number)[], message: string, hint?: string) => void): void {
  const variable = /\{\{[^{}]*\}\}/g;
  // Each variable stands in as a text of its own length, valid inside a JSON string and not
  // outside one; offsets of the JSON check are then offsets of the written text.
  const bad = findJsonError(args.replace(variable, (v) => "x".padEnd(v.length)));
  if (!bad) return;
  const outside = [...args.matchAll(variable)].find((m) => m.index === bad.offset);
  if (outside) {
    fail(
      [],
      `${outside[0]} is outside a JSON string in the arguments text`,
      `put it inside double quotes, "${outside[0]}" (its value goes in JSON-escaped), or write the arguments as a mapping`,
    );
  } else {
    fail(
      [],
      `arguments text is not valid JSON: ${bad.message} at character ${bad.offset + 1}`,
      "write the arguments as a mapping, and modelstub writes the JSON for you",
    );
  }
}

/** Renders a tool call's arguments: a mapping's string leaves are templates, then JSON. */
export function compileArguments(
  args: unknown,
  captures: CaptureInfo | undefined,
  fail: (path: (string | number)[], message: string, hint?: string, needle?: string) => void,
): { render: CompiledToolCall["arguments"]; literal: string | undefined } {
  if (args === undefined) return { render: () => "{}", literal: "{}" };
  if (typeof args === "string") {
    const t = compileTemplate(args, captures, (m, h, n) => fail([], m, h, n));
    checkArgumentsText(args, fail);
    return { render: (c) => t.render(c, jsonEscape), literal: t.literal };
  }
  let dynamic = false;
  const build = (value: unknown, path: (string | number)[]): ((c: TemplateContext) => unknown) => {
    if (typeof value === "string") {
      const t = compileTemplate(value, captures, (m, h, n) => fail(path, m, h, n));
      if (t.literal !== undefined) return () => value;
      dynamic = true;
      return (c) => t.render(c);
    }
    if (Array.isArray(value)) {
      const items = value.map((v, i) => build(v, [...path, i]));
      return (c) => items.map((f) => f(c));
    }
    if (value !== null && typeof value === "object") {
      const fields = Object.entries(value).map(([k, v]) => [k, build(v, [...path, k])] as const);
      return (c) => Object.fromEntries(fields.map(([k, f]) => [k, f(c)]));
    }
    return () => value;
  };
  const root = build(args, []);
  if (!dynamic) {
    const literal = JSON.stringify(args);
    return { render: () => literal, literal };
  }
  return { render: (c) => JSON.stringify(root(c)), literal: undefined };
}
