import type { Rng } from "./prng.js";
import { randomText } from "./prng.js";

/** Replacement scalars: other types, huge and negative numbers, long and unicode texts. */
function randomScalar(rng: Rng): string {
  return rng.pick([
    () => String(rng.int(10)),
    () => "-1",
    () => "4294967296",
    () => "99999999999999999999999",
    () => "1e400",
    () => "-0.5",
    () => "true",
    () => "null",
    () => "~",
    () => "[]",
    () => "{}",
    () => "[1, [2, [3]]]",
    () => "{ a: { b: { c: 1 } } }",
    () => '"{{last_user}}"',
    () => '"{{match.1}}"',
    () => '"{{nope}}"',
    () => "250ms",
    () => "24d",
    () => "34560m",
    () => JSON.stringify("x".repeat(rng.pick([100, 5000, 200_000]))),
    () => JSON.stringify(randomText(rng, 40)),
    () => '"\\ud800"',
    () => "日本語 😀",
    () => "INTERNAL",
    () => "drop",
    () => "*a",
    () => "&a x",
    () => "!!binary aGk=",
    () => "'unclosed",
    () => '"(?<g>a+)+"',
  ])();
}

const lineMutations: ((rng: Rng, lines: string[], json: boolean) => void)[] = [
  // delete a line
  (rng, lines) => void lines.splice(rng.int(lines.length), 1),
  // duplicate a line
  (rng, lines) => {
    const i = rng.int(lines.length);
    lines.splice(i, 0, lines[i] ?? "");
  },
  // swap two lines
  (rng, lines) => {
    const i = rng.int(lines.length);
    const j = rng.int(lines.length);
    [lines[i], lines[j]] = [lines[j] ?? "", lines[i] ?? ""];
  },
  // change a line's indentation
  (rng, lines) => {
    const i = rng.int(lines.length);
    const l = lines[i] ?? "";
    lines[i] = rng.chance(0.5) ? `${rng.pick([" ", "  ", "    ", "\t"])}${l}` : l.replace(/^ {1,4}/, "");
  },
  // replace a scalar after a colon or a dash
  (rng, lines) => {
    const i = rng.int(lines.length);
    lines[i] = (lines[i] ?? "").replace(/(:\s+|-\s+)([^\s{[].*)$/, (_m, sep: string) => `${sep}${randomScalar(rng)}`);
  },
  // anchor a value and alias it further down
  (rng, lines) => {
    const i = rng.int(lines.length);
    lines[i] = (lines[i] ?? "").replace(/:\s+(\S)/, ": &a $1");
    const j = rng.range(i, lines.length);
    const k = Math.min(j, lines.length);
    lines.splice(k, 0, `${(lines[k] ?? "").match(/^\s*/)![0]}${rng.pick(["x", "reply", "entries", "- reply"])}: *a`);
  },
  // nest a value deeper
  (rng, lines) => {
    const i = rng.int(lines.length);
    const d = rng.pick([1, 3, 40, 70]);
    lines[i] = (lines[i] ?? "").replace(/:\s+(.+)$/, (_m, v: string) => `: ${"[".repeat(d)}${v}${"]".repeat(d)}`);
  },
  // flip brackets (JSON and YAML flow style)
  (rng, lines) => {
    const i = rng.int(lines.length);
    const flip: Record<string, string> = { "{": "[", "[": "{", "}": "]", "]": "}" };
    lines[i] = (lines[i] ?? "").replace(/[{}[\]]/g, (c) => (rng.chance(0.5) ? flip[c]! : c));
  },
  // drop or add a comma (JSON)
  (rng, lines) => {
    const i = rng.int(lines.length);
    const l = lines[i] ?? "";
    lines[i] = l.endsWith(",") ? l.slice(0, -1) : `${l},`;
  },
  // a random line of text
  (rng, lines) =>
    void lines.splice(
      rng.int(lines.length + 1),
      0,
      rng.chance(0.5)
        ? randomText(rng, 30)
        : `${" ".repeat(rng.int(6))}${rng.pick(["latency", "times", "repeat", "match", "break", "regex", "steps", "chunks"])}: ${randomScalar(rng)}`,
    ),
];

/** A script text mutated by 1 to `maxEdits` seeded edits of its lines. */
export function mutateScript(rng: Rng, text: string, json: boolean, maxEdits = 3): string {
  const lines = text.split("\n");
  for (let n = rng.range(1, maxEdits); n > 0; n--) rng.pick(lineMutations)(rng, lines, json);
  return lines.join("\n");
}
