import { fromBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeSchema, FaultKind, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { chaosDraws, chaosKind, ratePpm, CHAOS_KINDS } from "../../src/shared/chaos-draw.js";
import { Code } from "../../src/index.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";

const script = `
steps:
  plan: { on_exhausted: cycle, entries: [{ reply: "plan it" }] }
  act: { on_exhausted: cycle, entries: [{ reply: "act on it" }] }
`;

const chaos = (extra = "") => `
name: storm
chaos:
  seed: 42
  rates: { error: 0.2, timeout: 0.1, break: 0.1, latency: 0.1 }
  errors: [{ code: UNAVAILABLE }, { code: RESOURCE_EXHAUSTED }]
  latency: 20ms
${extra}`;

let servers: StubServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** 30 calls, alternating steps and methods, under `plan`, on `clock`; the episode's bytes. */
async function run(plan: string, clock: "real" | "virtual", session = "chaos"): Promise<Buffer> {
  const s = await startStubServer(script, { clock });
  servers.push(s);
  await s.control.call("SetFaultPlan", { session, plan });
  for (let i = 0; i < 30; i++) {
    const step = i % 3 === 0 ? "act" : "plan";
    if (i % 2 === 0) await s.port.generate(userRequest(`call ${i}`), { step, session }).catch(() => undefined);
    else await collect(s.port.generateStream(userRequest(`call ${i}`), { step, session }));
  }
  return Buffer.from(s.stub.episodeBytes(session));
}

const faults = (bytes: Uint8Array) =>
  fromBinary(EpisodeSchema, bytes).calls.map((c) => (c.fault ? `${c.sequence}:${FaultKind[c.fault.kind]}:${c.fault.roll}` : ""));

/** The schedule as docs/faults.md specifies it, computed here from the draws alone. */
function expectedSchedule(episode: Episode, ppm: number[], budget = Infinity, inScope: (step: string, stream: boolean) => boolean = () => true): string[] {
  let spent = 0;
  return episode.calls.map((c) => {
    if (spent >= budget || !inScope(c.stepId, c.method === 2)) return "";
    const { roll } = chaosDraws(42n, episode.session, Number(c.sequence), c.stepId, 2);
    const kind = chaosKind(roll, ppm);
    if (kind === undefined) return "";
    spent++;
    return `${c.sequence}:${kind.toUpperCase()}:${roll}`;
  });
}

const ppm = CHAOS_KINDS.map((k) => ratePpm({ error: 0.2, timeout: 0.1, hang: 0, break: 0.1, latency: 0.1 }[k]));

describe("seeded chaos", () => {
  it("strikes the calls its draws choose, as the documented algorithm computes them", async () => {
    const bytes = await run(chaos(), "virtual");
    const episode = fromBinary(EpisodeSchema, bytes);
    const got = faults(bytes);
    expect(got).toEqual(expectedSchedule(episode, ppm));
    // About half the calls at these rates; not none, not all.
    expect(got.filter(Boolean).length).toBeGreaterThan(5);
    expect(got.filter(Boolean).length).toBeLessThan(25);
    expect(episode.faultPlan?.chaosSeed).toBe(42n);
  });

  it("gives byte-identical episodes for the same seed, on the virtual clock and on the real one", async () => {
    const virtual = await run(chaos(), "virtual");
    expect(virtual.equals(await run(chaos(), "virtual"))).toBe(true);
    expect(virtual.equals(await run(chaos(), "real"))).toBe(true);
  });

  it("draws another schedule for another seed, or another session", async () => {
    const base = faults(await run(chaos(), "virtual"));
    expect(faults(await run(chaos().replace("seed: 42", "seed: 43"), "virtual"))).not.toEqual(base);
    expect(faults(await run(chaos(), "virtual", "other")).map((f) => f)).not.toEqual(base);
  });

  it("picks the error among the plan's statuses by the second draw", async () => {
    const bytes = await run(chaos(), "virtual");
    const episode = fromBinary(EpisodeSchema, bytes);
    const codes = episode.calls
      .filter((c) => c.fault?.kind === FaultKind.ERROR)
      .map((c) => [c.status?.code, [Code.UNAVAILABLE, Code.RESOURCE_EXHAUSTED][chaosDraws(42n, "chaos", Number(c.sequence), c.stepId, 2).pick]]);
    expect(codes.length).toBeGreaterThan(0);
    for (const [got, want] of codes) expect(got).toBe(want);
  });

  it("spends at most its budget of faults per episode", async () => {
    const bytes = await run(chaos("  budget: 3"), "virtual");
    const got = faults(bytes);
    expect(got.filter(Boolean)).toHaveLength(3);
    expect(got).toEqual(expectedSchedule(fromBinary(EpisodeSchema, bytes), ppm, 3));
  });

  it("strikes only the steps and methods in its scope", async () => {
    const bytes = await run(chaos("  scope: { steps: [plan], methods: [generate_stream] }"), "virtual");
    const episode = fromBinary(EpisodeSchema, bytes);
    expect(faults(bytes)).toEqual(expectedSchedule(episode, ppm, Infinity, (step, stream) => step === "plan" && stream));
    for (const c of episode.calls) if (c.fault) expect([c.stepId, c.method]).toEqual(["plan", 2]);
  });

  it("is pinned end to end: seed 42, session chaos, these calls, this schedule", async () => {
    // A change here changes every harness's schedule: docs/faults.md's vectors say the same.
    expect(faults(await run(chaos(), "virtual")).filter(Boolean)).toMatchInlineSnapshot(`
      [
        "2:ERROR:151553",
        "3:ERROR:103740",
        "5:TIMEOUT:218344",
        "10:ERROR:93007",
        "12:ERROR:167866",
        "15:TIMEOUT:218237",
        "17:LATENCY:434565",
        "25:LATENCY:441759",
        "27:ERROR:193534",
        "29:LATENCY:450607",
      ]
    `);
  });
});
