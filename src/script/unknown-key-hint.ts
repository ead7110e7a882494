import { nearestName } from "../shared/nearest-name.js";
import { defOf, keysOf, schemasAt, type AnySchema } from "./schemas-at.js";

/**
 * Texts longer than this are never taken for a misspelt key or value: every key and value of
 * the format is far shorter, and an edit distance costs the product of the lengths (a script
 * of 3,000 keys of 300 characters took 16 s to explain before this bound).
 */
export const longestGuess = 40;

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

/** unknownKeyHint's answers by key and place, for the same slip made on every entry. */
const unknownKeyHints = new WeakMap<AnySchema, Map<string, string | undefined>>();

/** The hint for an unknown key: where it belongs, what it likely meant, or the keys allowed here. */
export function unknownKeyHint(key: string, allowed: readonly string[], schema: AnySchema, path: readonly (string | number)[]): string | undefined {
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
