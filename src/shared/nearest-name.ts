/**
 * Edit distance between two short names: the fewest inserts, deletes, substitutions and swaps of
 * neighbouring characters that turn one into the other (Damerau-Levenshtein, each substring
 * edited once).
 */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** Characters that join the parts of a name (`agent/plan`, `tool_calls`, `act-1`). */
const separators = /[._:/-]/;

/**
 * Whether the shorter name, at least 3 characters long, starts the longer one (`plan` of
 * `planner`) or ends it as a whole part (`plan` of `agent/plan`): a name typed short or with
 * its prefix left out.
 */
function isAffix(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length < 3 || short.length === long.length) return false;
  if (long.startsWith(short)) return true;
  return long.endsWith(short) && separators.test(long[long.length - short.length - 1]!);
}

/**
 * The candidate closest to `name` when it is close enough to be a likely typo; undefined
 * otherwise, so a hint never points somewhere unrelated. Case is ignored. A candidate is close
 * when the edit distance is at most 40% of the longer name's length, rounded down, and at least
 * 1 (`revue` -> `review`: 2 edits of 6; `plna` -> `plan`: 1 swap; `act` -> `ask` is 2 of 3, not
 * close), or when one name starts the other or ends it as a whole part (`plan` -> `planner`,
 * `plan` -> `agent/plan`). Of the close candidates, the one fewest edits away wins; on a tie,
 * the first given.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const other = c.toLowerCase();
    const dist = editDistance(lower, other);
    const limit = Math.max(1, Math.floor(0.4 * Math.max(lower.length, other.length)));
    if ((dist <= limit || isAffix(lower, other)) && dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}
