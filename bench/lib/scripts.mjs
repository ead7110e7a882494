// The modelstub scripts the bench serves, written to the cache. Each reply matches the floor's
// pre-encoded bytes in size (see payloads.mjs).
import fs from "node:fs";
import path from "node:path";
import { CACHE_DIR } from "./paths.mjs";
import { STREAM_TEXT, UNARY_REPLY } from "./payloads.mjs";
import { HTTP_TEXT } from "./http-payloads.mjs";

const q = JSON.stringify; // a JSON string is a valid YAML flow scalar

export const scriptTexts = {
  /** Unary: one reply, forever. */
  unary: () => `entries:\n  on_exhausted: cycle\n  entries:\n    - reply: ${q(UNARY_REPLY)}\n`,
  /** HTTP: one reply, forever; the text mock-llm echoes back from the bench request. */
  http: () => `entries:\n  on_exhausted: cycle\n  entries:\n    - reply: ${q(HTTP_TEXT)}\n`,
  /** In-process port: one literal reply, repeated (load/inprocess-literal.mjs). */
  literal: () => `entries:\n  - repeat: true\n    reply: Hello from modelstub\n`,
  /** Streaming: 1,000 one-character chunks, no declared delay. */
  stream: () => `entries:\n  on_exhausted: cycle\n  entries:\n    - reply:\n        text: ${q(STREAM_TEXT)}\n        chunking: {chars: 1}\n`,
  /** Virtual time: n entries declaring 1 s each, used once in order. */
  virtual: (n) => {
    const lines = ["entries:", "  on_exhausted: fail", "  entries:"];
    for (let i = 0; i < n; i++) lines.push(`    - {latency: 1s, reply: ${q(UNARY_REPLY)}}`);
    return `${lines.join("\n")}\n`;
  },
  /** Scale: every call hangs until the caller's deadline. */
  hang: () => `entries:\n  on_exhausted: cycle\n  entries:\n    - hang: true\n`,
  /** Timing accuracy: 100 ms declared latency on the real clock. */
  latency: (ms = 100) => `entries:\n  on_exhausted: cycle\n  entries:\n    - latency: ${ms}ms\n      reply: ${q(UNARY_REPLY)}\n`,
};

/** Writes a script to the cache; returns its path. */
export function writeScript(name, ...args) {
  const dir = path.join(CACHE_DIR, "scripts");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}${args.length ? `-${args.join("-")}` : ""}.yaml`);
  fs.writeFileSync(file, scriptTexts[name](...args));
  return file;
}
