import { describe, expect, it } from "vitest";
import { scanJsonBody, type BodyLimits } from "../../src/http/scan-json-body.js";
import { createRng, type Rng } from "../fuzz/prng.js";

/*
 * The pre-scan decides on a body's text what the parsers decided on JSON.parse's value: these
 * checks draw 3,000 bodies full of what a lexer gets wrong (brackets, braces, commas, colons and
 * quotes inside strings, escapes, runs of backslashes, \u escapes in keys, unicode, whitespace)
 * and compare its verdict with one computed from the parsed value, under small bounds so that
 * every bound is passed often.
 */

const limits: BodyLimits = [
  { path: ["messages"], limit: 5, what: "messages", per: "in a request" },
  {
    path: ["messages", "*", "tool_calls"],
    limit: 3,
    what: "tool calls",
    per: "in a message",
    total: { limit: 6, field: "the request", what: "tool calls in all its messages", param: "messages" },
  },
  { path: ["tools"], limit: 4, what: "tools", per: "in a request" },
];
const depthLimit = 6;
const valuesLimit = 32;

const tricky = ['"', "\\", "[", "]", "{", "}", ",", ":", "\\\\", '\\"', "é", "🙂", "\u2028", "\n", " ", "x", "messages"];

function randomString(rng: Rng): string {
  let s = "";
  for (let i = rng.int(6); i > 0; i--) s += rng.pick(tricky);
  return s;
}

function randomValue(rng: Rng, depth: number): unknown {
  const kind = depth > depthLimit + 1 ? rng.int(7) : rng.int(10);
  if (kind < 4) return randomString(rng);
  if (kind < 6) return rng.pick([0, -1.5e-7, 12345678901234567000, true, false, null]);
  if (kind === 6) return rng.chance(0.5) ? [] : {};
  if (kind < 9) return Array.from({ length: rng.int(8) }, () => randomValue(rng, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = rng.int(4); i > 0; i--) o[rng.chance(0.3) ? "tool_calls" : randomString(rng)] = randomValue(rng, depth + 1);
  return o;
}

function randomBody(rng: Rng): unknown {
  const body: Record<string, unknown> = {};
  if (rng.chance(0.8)) {
    body["messages"] = Array.from({ length: rng.int(8) }, () => {
      const m: Record<string, unknown> = { role: randomString(rng), content: randomValue(rng, 3) };
      if (rng.chance(0.6)) m["tool_calls"] = Array.from({ length: rng.chance(0.9) ? rng.int(4) : 4 }, () => randomValue(rng, 4));
      return m;
    });
  }
  if (rng.chance(0.4)) body["tools"] = Array.from({ length: rng.int(6) }, () => randomValue(rng, 2));
  if (rng.chance(0.5)) body[randomString(rng)] = randomValue(rng, 1);
  return rng.chance(0.05) ? randomValue(rng, 0) : body;
}

/** The body's text: JSON.stringify with random indentation, and keys sometimes written with \u escapes. */
function textOf(rng: Rng, body: unknown): string {
  const text = JSON.stringify(body, null, rng.pick<number | string | undefined>([undefined, 1, "\t", "\r\n "]));
  return rng.chance(0.3) ? text.replace(/"messages":/, '"\\u006des\\u0073ages":') : text;
}

/** What the parsers decide on the parsed value: the bounds it passes. */
function reference(value: unknown) {
  let depth = 0;
  let values = 0;
  const walk = (v: unknown, level: number) => {
    values++;
    if (typeof v !== "object" || v === null) return;
    depth = Math.max(depth, level);
    for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child, level + 1);
  };
  walk(value, 1);
  const body = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const messages = Array.isArray(body["messages"]) ? (body["messages"] as unknown[]) : undefined;
  const calls = (messages ?? []).map((m) =>
    typeof m === "object" && m !== null && Array.isArray((m as Record<string, unknown>)["tool_calls"])
      ? ((m as Record<string, unknown>)["tool_calls"] as unknown[]).length
      : 0,
  );
  const tools = Array.isArray(body["tools"]) ? (body["tools"] as unknown[]).length : undefined;
  const overLists: string[] = [];
  if (messages && messages.length > 5) overLists.push(`messages holds ${messages.length} messages`);
  calls.forEach((n, i) => {
    if (n > 3) overLists.push(`messages[${i}].tool_calls holds ${n} tool calls`);
  });
  if (tools !== undefined && tools > 4) overLists.push(`tools holds ${tools} tools`);
  const total = calls.reduce((a, b) => a + b, 0);
  return { tooDeep: depth > depthLimit, overLists, overTotal: total > 6, tooMany: values > valuesLimit };
}

describe("the HTTP body pre-scan, against JSON.parse", () => {
  it("refuses exactly the bodies whose parsed value passes a bound, with the parser's counts", () => {
    const rng = createRng("scan-json-body");
    const seen = { deep: 0, list: 0, total: 0, values: 0, passed: 0 };
    for (let i = 0; i < 3000; i++) {
      const body = randomBody(rng);
      const text = textOf(rng, body);
      const ref = reference(JSON.parse(text));
      const verdict = scanJsonBody(text, limits, depthLimit, valuesLimit);
      const why = `case ${i}: ${text.slice(0, 300)}`;
      if (!verdict) {
        expect(ref, why).toEqual({ tooDeep: false, overLists: [], overTotal: false, tooMany: false });
        seen.passed++;
      } else if (verdict.code === "invalid_value") {
        expect(ref.tooDeep, why).toBe(true);
        seen.deep++;
      } else if (verdict.message.startsWith("the request holds more than 6 tool calls")) {
        expect(ref.overTotal, why).toBe(true);
        seen.total++;
      } else if (verdict.message.startsWith("the request body holds more than")) {
        expect(ref.tooMany, why).toBe(true);
        seen.values++;
      } else {
        // A list past its limit: the one named, with the count the parsed value has.
        expect(ref.overLists, why).toContain(verdict.message.slice(0, verdict.message.indexOf(";")));
        seen.list++;
      }
    }
    // Every kind of verdict was drawn often enough to mean something.
    for (const [kind, n] of Object.entries(seen)) expect(n, `${kind} in ${JSON.stringify(seen)}`).toBeGreaterThan(50);
  });

  it("leaves a body that is not JSON to JSON.parse, unless a bound was passed before its fault", () => {
    expect(scanJsonBody('{"messages": [1, 2', limits)).toBeUndefined();
    expect(scanJsonBody('{"messages": "unterminated', limits)).toBeUndefined();
    expect(scanJsonBody('{"a": 1]', limits)).toBeUndefined();
    expect(scanJsonBody(`{"messages": [1,2,3,4,5,6 oops`, limits, depthLimit, valuesLimit)?.message).toMatch(/^messages holds 6 messages/);
    expect(scanJsonBody(`${"[".repeat(7)}`, limits, depthLimit, valuesLimit)?.message).toContain("deeper than 6 levels (at [0][0][0][0][0][0])");
  });
});
