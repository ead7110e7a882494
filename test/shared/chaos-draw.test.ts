import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CHAOS_KINDS, chaosDraws, chaosKey, chaosKind, fnv1a64, ratePpm, splitmix64Next } from "../../src/shared/chaos-draw.js";

const root = new URL("../../", import.meta.url).pathname;
const hex = (n: bigint) => `0x${n.toString(16).padStart(16, "0")}`;

/**
 * Fixed vectors of the chaos PRNG, computed once with examples/chaos/chaos_schedule.py (an
 * independent implementation of the spec). They are the contract a Go or Python harness relies on:
 * a change here changes every chaos schedule ever recorded.
 */
const vectors = [
  { seed: "0", session: "s", sequence: 1, step: "", errorCount: 1, key: "0x593bd5af4d8e5cba", roll: 412585, pick: 0 },
  { seed: "42", session: "session-1", sequence: 1, step: "plan", errorCount: 1, key: "0x92476bcb46304f3e", roll: 264416, pick: 0 },
  { seed: "42", session: "session-1", sequence: 2, step: "plan", errorCount: 3, key: "0xe0317a56b17f52c4", roll: 914938, pick: 0 },
  { seed: "42", session: "session-1", sequence: 3, step: "act", errorCount: 2, key: "0x63d359fb3228e22f", roll: 448152, pick: 0 },
  { seed: "42", session: "session-2", sequence: 1, step: "plan", errorCount: 1, key: "0xf940901d39fb94f3", roll: 591282, pick: 0 },
  { seed: "18446744073709551615", session: "session-1", sequence: 1, step: "plan", errorCount: 5, key: "0xbadd23ea25e49972", roll: 166743, pick: 1 },
  { seed: "9007199254740993", session: "abc", sequence: 7, step: "act", errorCount: 4, key: "0x1b220f6944ced5a6", roll: 574493, pick: 0 },
  { seed: "9223372036854775808", session: "s", sequence: 2, step: "", errorCount: 6, key: "0x617892944ddda2d8", roll: 7756, pick: 3 },
  { seed: "1234567890123456789", session: "ünïcödé-セッション", sequence: 1, step: "plan", errorCount: 3, key: "0xe55eac0eb687f4eb", roll: 597631, pick: 1 },
  { seed: "7", session: "", sequence: 1, step: "", errorCount: 1, key: "0x94b3db379f409e42", roll: 866612, pick: 0 },
  { seed: "42", session: "session-1", sequence: 4294967295, step: "plan", errorCount: 7, key: "0x2509319d1d7b7c81", roll: 60994, pick: 3 },
  { seed: "42", session: "session-1", sequence: 9007199254740991, step: "act", errorCount: 2, key: "0xf707612014d886df", roll: 956962, pick: 0 },
  { seed: "16045690984503098046", session: "run/17", sequence: 100, step: "tool_call", errorCount: 10, key: "0x62cbe0346d47da77", roll: 997876, pick: 3 },
  { seed: "1", session: "a", sequence: 1, step: "a", errorCount: 1000, key: "0x51bfd7812464930c", roll: 113651, pick: 262 },
];

/** What the TypeScript computes for a vector's inputs, in the shape the Python prints. */
const computed = ({ seed, session, sequence, step, errorCount }: (typeof vectors)[number]) => ({
  seed,
  session,
  sequence,
  step,
  errorCount,
  key: hex(chaosKey(BigInt(seed), session, sequence, step)),
  ...chaosDraws(BigInt(seed), session, sequence, step, errorCount),
});

describe("fnv1a64()", () => {
  it("gives the standard FNV-1a 64 values", () => {
    expect(fnv1a64("")).toBe(0xcbf29ce484222325n);
    expect(fnv1a64("a")).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64("foobar")).toBe(0x85944171f73967e8n);
  });

  it("hashes a non-ASCII string's UTF-8 bytes, not its UTF-16 code units", () => {
    expect(fnv1a64("é")).toBe(0x0ac21707b7181e01n);
    expect(fnv1a64("ünïcödé-セッション")).toBe(0x135efb30f4d1fd94n);
  });
});

describe("splitmix64Next()", () => {
  it("reproduces the well-known SplitMix64 sequence from state 0", () => {
    const outputs: bigint[] = [];
    let state = 0n;
    for (let i = 0; i < 3; i++) {
      const step = splitmix64Next(state);
      outputs.push(step.output);
      state = step.state;
    }
    expect(outputs).toEqual([0xe220a8397b1dcdafn, 0x6e789e6aa1b965f4n, 0x06c45d188009454fn]);
  });

  it("wraps at 2^64 instead of growing past it", () => {
    expect(splitmix64Next(0xffffffffffffffffn).state).toBe(0x9e3779b97f4a7c14n);
  });
});

describe("chaosKey() and chaosDraws()", () => {
  it("covers seed 0, 2^64-1 and above 2^53, empty and non-ASCII text, sequence 1 and large", () => {
    const seeds = vectors.map((v) => BigInt(v.seed));
    expect(seeds).toContain(0n);
    expect(seeds).toContain(2n ** 64n - 1n);
    expect(seeds.some((s) => s > 2n ** 53n && s < 2n ** 64n - 1n)).toBe(true);
    expect(vectors.some((v) => v.step === "")).toBe(true);
    expect(vectors.some((v) => /[^\x00-\x7f]/.test(v.session))).toBe(true);
    expect(vectors.some((v) => v.sequence === 1)).toBe(true);
    expect(vectors.some((v) => v.sequence > 2 ** 32)).toBe(true);
  });

  it.each(vectors)("draws the pinned key, roll and pick for seed $seed, session '$session', call $sequence, step '$step'", (v) => {
    expect(computed(v)).toEqual(v);
  });

  it("keeps every roll in 0..999999 and every pick in 0..errorCount-1", () => {
    for (let sequence = 1; sequence <= 200; sequence++) {
      const { roll, pick } = chaosDraws(42n, "range", sequence, "plan", 3);
      expect(roll).toBeGreaterThanOrEqual(0);
      expect(roll).toBeLessThan(1_000_000);
      expect([0, 1, 2]).toContain(pick);
    }
  });

  it("refuses an error count below 1", () => {
    expect(() => chaosDraws(1n, "s", 1, "", 0)).toThrow(RangeError);
  });
});

describe("ratePpm()", () => {
  it("turns a rate into whole parts per million, rounding away float noise", () => {
    expect(ratePpm(0.1)).toBe(100000);
    expect(ratePpm(0.000001)).toBe(1);
    expect(ratePpm(0)).toBe(0);
    expect(ratePpm(1)).toBe(1_000_000);
    expect(ratePpm(0.07)).toBe(70000);
  });
});

describe("chaosKind()", () => {
  const ppm = [100000, 50000, 0, 50000, 100000]; // error, timeout, hang, break, latency

  it("stacks the kinds in the order error, timeout, hang, break, latency", () => {
    expect(CHAOS_KINDS).toEqual(["error", "timeout", "hang", "break", "latency"]);
    expect(chaosKind(0, ppm)).toBe("error");
    expect(chaosKind(99999, ppm)).toBe("error");
    expect(chaosKind(149999, ppm)).toBe("timeout");
    expect(chaosKind(199999, ppm)).toBe("break");
    expect(chaosKind(299999, ppm)).toBe("latency");
  });

  it("sends a roll exactly at a cumulative boundary to the next kind", () => {
    expect(chaosKind(100000, ppm)).toBe("timeout");
    expect(chaosKind(150000, ppm)).toBe("break"); // hang's rate is 0: it takes no roll
    expect(chaosKind(200000, ppm)).toBe("latency");
    expect(chaosKind(300000, ppm)).toBeUndefined();
  });

  it("gives no kind when every rate is zero", () => {
    for (const roll of [0, 1, 500000, 999999]) expect(chaosKind(roll, [0, 0, 0, 0, 0])).toBeUndefined();
  });

  it("always gives a kind when the rates sum to one million", () => {
    const full = [200000, 200000, 200000, 200000, 200000];
    for (const roll of [0, 199999, 200000, 500000, 999999]) expect(chaosKind(roll, full)).toBeDefined();
    expect(chaosKind(999999, full)).toBe("latency");
    expect(chaosKind(999999, [1_000_000, 0, 0, 0, 0])).toBe("error");
  });
});

describe("examples/chaos/chaos_schedule.py, the Python reference", () => {
  it("prints exactly the vectors the TypeScript computes", () => {
    const out = execFileSync("python3", ["examples/chaos/chaos_schedule.py", "--vectors"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, PYTHONIOENCODING: "utf-8" },
    });
    const printed = out
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    expect(printed).toEqual(vectors.map(computed));
  });

  it("prints one call's roll and pick from the command line", () => {
    const v = vectors[5]!;
    const out = execFileSync("python3", ["examples/chaos/chaos_schedule.py", v.seed, v.session, String(v.sequence), v.step, String(v.errorCount)], {
      cwd: root,
      encoding: "utf8",
    });
    expect(out).toBe(`${v.roll} ${v.pick}\n`);
  });
});
