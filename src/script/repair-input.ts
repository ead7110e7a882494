import { valueAt } from "./describe-value.js";
import type { PathIssue } from "./explain-zod-issues.js";

/** A field path as the checks report it. */
type Path = (string | number)[];

/**
 * A copy of an input with what the schema refused taken out, so that the compiler can check the
 * rest: `validate` then reports a misspelt key and a wrong template variable of the same entry
 * together, not the first alone. Paths it answers are those of the original input.
 */
export interface RepairedInput {
  /** The input as the schema accepts it. */
  data: unknown;
  /** Original paths of what was taken out (a key, a value, a list item). */
  removed: Path[];
  /** The original path of a path of `data` (list items after a removed one moved up). */
  originalPath(path: readonly (string | number)[]): Path;
}

/** Parses a value with the schema: its output, or the explained problems. */
export type Reparse = (value: unknown) => { data: unknown } | { issues: PathIssue[] };

// A list item to take out at the end of a round, once every path of that round has been read.
const hole = Symbol("removed");

/** The most rounds of repair: each takes out at least one more field or climbs one level. */
const maxRounds = 16;

const isObject = (v: unknown): v is Record<PropertyKey, unknown> => v !== null && typeof v === "object";

/**
 * Takes out of a copy of `input` every field `issues` name (an unknown key, a value of the wrong
 * kind; a missing field takes out what holds it) and parses again, until the schema accepts the
 * rest. Problems found on the way are not reported: they only echo the ones taken out. Undefined
 * when nothing sensible is left (the whole input would go).
 */
export function repairInput(input: unknown, issues: readonly PathIssue[], reparse: Reparse): RepairedInput | undefined {
  const value: { root: unknown } = { root: structuredClone(input) };
  // For each list that lost items: the original index of each item left.
  const indexes = new WeakMap<unknown[], number[]>();
  const removed: Path[] = [];
  const originalPath = (path: readonly (string | number)[]): Path => {
    const out: Path = [];
    let node: unknown = value.root;
    for (const seg of path) {
      const map = Array.isArray(node) ? indexes.get(node) : undefined;
      out.push(map && typeof seg === "number" ? (map[seg] ?? seg) : seg);
      node = isObject(node) ? node[seg] : undefined;
    }
    return out;
  };
  let round = issues;
  for (let n = 0; n < maxRounds; n++) {
    const marked = new Set<unknown[]>();
    for (const issue of round) {
      let target: Path = issue.key !== undefined ? [...issue.path, issue.key] : [...issue.path];
      // A missing field: what holds it goes.
      while (target.length > 0 && valueAt(value.root, target) === undefined) target = target.slice(0, -1);
      if (target.length === 0) return undefined;
      const parent = valueAt(value.root, target.slice(0, -1));
      const last = target[target.length - 1]!;
      if (!isObject(parent) || parent[last] === hole) continue;
      removed.push(originalPath(target));
      if (Array.isArray(parent)) {
        parent[last as number] = hole;
        marked.add(parent);
      } else {
        delete parent[last];
      }
    }
    for (const list of marked) {
      const before = indexes.get(list) ?? list.map((_, i) => i);
      const kept = before.filter((_, i) => list[i] !== hole);
      const items = list.filter((item) => item !== hole);
      // In place (the list's identity keys `indexes`), without spreading 40,000 items into a call.
      for (let i = 0; i < items.length; i++) list[i] = items[i];
      list.length = items.length;
      indexes.set(list, kept);
    }
    const parsed = reparse(value.root);
    if ("data" in parsed) return { data: parsed.data, removed, originalPath };
    round = parsed.issues;
  }
  return undefined;
}

/**
 * Whether a problem the compiler found in a repaired input may be an echo of a repair: it sits
 * at or above something taken out (an entry that lost its misspelt `reply` "has no action").
 */
export function echoesRepair(path: readonly (string | number)[], removed: readonly Path[]): boolean {
  return removed.some((r) => path.length <= r.length && path.every((seg, i) => seg === r[i]));
}
