import { Code } from "../../src/index.js";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeSchema, FaultKind, Outcome, StreamBreak, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { collect, userRequest } from "../support/requests.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { code } from "../failures/failure-fixture.js";

/** A three-step workflow: plan, a tool turn, an answer. */
const workflow = `
steps:
  plan:
    - reply: "plan: look it up"
    - reply: "plan: second thoughts"
  act:
    - latency: 2s
      reply: { chunks: ["calling ", "the ", "tool"], tool_calls: [{ name: search, arguments: { q: weather } }] }
  answer:
    - reply: "it is sunny"
`;

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script = workflow): Promise<StubServer> {
  server = await startStubServer(script, { clock: "virtual" });
  return server;
}

const setPlan = (s: StubServer, plan: string, session = "default") => s.control.call("SetFaultPlan", { session, plan, sourceName: "plan.yaml" });
const episodeOf = (s: StubServer, session = "default"): Episode => fromBinary(EpisodeSchema, s.stub.episodeBytes(session));
const say = (s: StubServer, step: string, session = "default") => s.port.generate(userRequest("weather?"), { step, session });

describe("a fault plan's rules", () => {
  it("strike the K-th call of a step, and the retry gets the answer the failed call would have had", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { step: plan, occurrence: 1 }, error: { code: UNAVAILABLE, message: "overloaded", trailers: { retry-after-ms: "50" } } }]`);
    const failed = await say(s, "plan").catch((e: { code: number; message: string }) => e);
    expect(failed).toMatchObject({ code: Code.UNAVAILABLE });
    expect((await say(s, "plan")).message?.content).toBe("plan: look it up");
    expect((await say(s, "plan")).message?.content).toBe("plan: second thoughts");
    const calls = episodeOf(s).calls;
    expect(calls.map((c) => [c.entry, c.outcome, c.fault?.rule, c.fault?.kind])).toEqual([
      ["", Outcome.ERROR, "rules[0]", FaultKind.ERROR],
      ["steps.plan[0]", Outcome.OK, undefined, undefined],
      ["steps.plan[1]", Outcome.OK, undefined, undefined],
    ]);
    expect(calls[0]!.status?.trailers.map((t) => [t.key, t.value])).toEqual([["retry-after-ms", "50"]]);
  });

  it("strike call N of the episode, whatever its step", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { call: 2 }, timeout: true, latency: 3s }]`);
    await say(s, "plan");
    expect(await code(say(s, "answer"))).toBe(Code.DEADLINE_EXCEEDED);
    const call = episodeOf(s).calls[1]!;
    expect([call.outcome, call.status?.message, call.fault?.kind, call.endMs - call.startMs]).toEqual([
      Outcome.TIMED_OUT,
      "timeout injected by the fault plan (rules[0])",
      FaultKind.TIMEOUT,
      3000n,
    ]);
  });

  it("strike the K-th call that matches, counted whatever else strikes", async () => {
    const s = await serve(`entries: [{ reply: ok, repeat: true }]`);
    await setPlan(
      s,
      `rules:
  - { at: { call: 1 }, answer: true }
  - { at: { match: { contains: retry }, occurrence: 2 }, error: { code: INTERNAL } }`,
    );
    const ask = (text: string) => code(s.port.generate(userRequest(text)));
    // Call 1 matches too: rule 0 wins it, and rule 1 counts it all the same.
    expect([await ask("retry"), await ask("other"), await ask("retry"), await ask("retry")]).toEqual([Code.OK, Code.OK, Code.INTERNAL, Code.OK]);
    expect(episodeOf(s).calls.map((c) => c.fault?.rule ?? "")).toEqual(["rules[0]", "", "rules[1]", ""]);
  });

  it("break a stream after N chunks of the script's reply, and the retry streams it whole", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { step: act }, break: { after_chunks: 2, then: drop } }]`);
    const broken = await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
    expect(broken.frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : f.frame.case))).toEqual(["calling ", "the "]);
    expect(broken.error).toMatchObject({ code: Code.INTERNAL });
    const whole = await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
    expect(whole.error).toBeUndefined();
    const [first, second] = episodeOf(s).calls;
    expect([first!.entry, first!.outcome, first!.streamBreak, first!.chunksSent, first!.fault?.kind]).toEqual([
      "steps.act[0]",
      Outcome.STREAM_BROKEN,
      StreamBreak.DROP,
      2,
      FaultKind.BREAK,
    ]);
    expect([second!.entry, second!.outcome, second!.fault]).toEqual(["steps.act[0]", Outcome.OK, undefined]);
  });

  it("break after the reply's last chunk when after_chunks counts past it: a planned break still breaks", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { step: act }, break: { after_chunks: 99, then: error } }]`);
    const broken = await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
    expect(broken.frames.filter((f) => f.frame.case === "final")).toEqual([]);
    expect(broken.error).toMatchObject({ code: Code.UNAVAILABLE });
    const call = episodeOf(s).calls[0]!;
    // Three text chunks and the tool call's two (its name, then its arguments).
    expect([call.outcome, call.streamBreak, call.chunksSent, call.status?.message]).toEqual([
      Outcome.STREAM_BROKEN,
      StreamBreak.ERROR,
      5,
      "stream broken by rules[0] after 99 chunks",
    ]);
  });

  it("hang a call until the caller's deadline, declared on the virtual clock", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { call: 1 }, hang: true }]`);
    expect(await code(s.port.generate(userRequest("x"), { step: "plan", timeoutMs: 1500 }))).toBe(Code.DEADLINE_EXCEEDED);
    const call = episodeOf(s).calls[0]!;
    expect([call.outcome, call.fault?.kind, call.entry]).toEqual([Outcome.DEADLINE_EXCEEDED, FaultKind.HANG, ""]);
  });

  it("give a call the plan's latency in place of the entry's, and let the script answer", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { step: act }, latency: 300m }]`);
    // Virtual time: 5 h declared and recorded; not waited, or the test would outlast its timeout.
    await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
    const call = episodeOf(s).calls[0]!;
    expect([call.outcome, call.fault?.kind, call.endMs - call.startMs]).toEqual([Outcome.OK, FaultKind.LATENCY, 18_000_000n]);
  });
});

describe("a session's fault plan", () => {
  it("is recorded in the episode by name and digest, and SetFaultPlan answers the same identity", async () => {
    const s = await serve();
    const res = await setPlan(s, `name: plan-fails-once\nrules: [{ at: { call: 1 }, error: { code: UNAVAILABLE } }]`);
    await code(say(s, "plan"));
    const recorded = episodeOf(s).faultPlan!;
    expect([recorded.name, recorded.digest, recorded.chaosSeed]).toEqual([res.plan!.name, res.plan!.digest, undefined]);
    expect(recorded.name).toBe("plan-fails-once");
    expect(recorded.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(res.rules).toBe(1);
  });

  it("has one digest however it is written: YAML or JSON, any key order", async () => {
    const s = await serve();
    const a = await setPlan(s, `rules: [{ at: { step: plan, occurrence: 2 }, error: { code: UNAVAILABLE } }]`, "a");
    const b = await setPlan(s, `{"rules": [{"error": {"code": "UNAVAILABLE"}, "at": {"occurrence": 2, "step": "plan"}}]}`, "b");
    const c = await setPlan(s, `rules: [{ at: { step: plan, occurrence: 3 }, error: { code: UNAVAILABLE } }]`, "c");
    expect(a.plan!.digest).toBe(b.plan!.digest);
    expect(c.plan!.digest).not.toBe(a.plan!.digest);
  });

  it("starts the session afresh, and a reset brings back the script's own plan", async () => {
    const s = await serve(`${workflow}\nfaults:\n  name: from-the-script\n  rules: [{ at: { call: 1 }, error: { code: ABORTED } }]\n`);
    expect(await code(say(s, "plan"))).toBe(Code.ABORTED);
    await say(s, "plan");
    const set = await setPlan(s, `rules: []`);
    expect(set.closedCalls).toBe(2);
    // A fresh episode under a plan of no rules: the script's plan is gone, its cursor rewound.
    expect((await say(s, "plan")).message?.content).toBe("plan: look it up");
    expect(episodeOf(s).faultPlan?.name).toBe("plan");
    await s.control.call("ResetSession", { session: "default" });
    expect(await code(say(s, "plan"))).toBe(Code.ABORTED);
    expect(episodeOf(s).faultPlan?.name).toBe("from-the-script");
  });

  it("belongs to one session: the others answer as the script says", async () => {
    const s = await serve();
    await setPlan(s, `rules: [{ at: { call: 1 }, error: { code: UNAVAILABLE } }]`, "faulty");
    expect(await code(say(s, "plan", "faulty"))).toBe(Code.UNAVAILABLE);
    expect(await code(say(s, "plan", "clean"))).toBe(Code.OK);
    expect(episodeOf(s, "clean").faultPlan).toBeUndefined();
  });

  it("gives byte-identical episodes when the same calls run under it again", async () => {
    const run = async () => {
      const s = await serve();
      await setPlan(s, `rules: [{ at: { step: act }, break: { after_chunks: 1, then: error } }, { at: { call: 1 }, timeout: true }]`);
      await code(say(s, "plan"));
      await say(s, "plan");
      await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
      await collect(s.port.generateStream(userRequest("go"), { step: "act" }));
      const bytes = s.stub.episodeBytes("default");
      await s.close();
      server = undefined;
      return Buffer.from(bytes);
    };
    const first = await run();
    expect(first.equals(await run())).toBe(true);
    // And they are what protobuf-es writes for the same message.
    expect(first.equals(Buffer.from(toBinary(EpisodeSchema, fromBinary(EpisodeSchema, first))))).toBe(true);
  });
});

describe("SetFaultPlan", () => {
  const refusal = (s: StubServer, plan: string) =>
    setPlan(s, plan).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );

  it("refuses a plan that is not valid with INVALID_ARGUMENT naming the file, line and field, and keeps the session as it was", async () => {
    const s = await serve();
    await say(s, "plan");
    const err = await refusal(s, `rules:\n  - at: { call: 0 }\n    error: { code: UNAVAILABLE }\n`);
    expect(err?.code).toBe(Code.INVALID_ARGUMENT);
    expect(err?.message).toContain("cannot load fault plan plan.yaml:2:");
    expect(err?.message).toContain("rules[0].at.call");
    // Nothing changed: the same episode, the same cursor.
    expect((await say(s, "plan")).message?.content).toBe("plan: second thoughts");
    expect(episodeOf(s).calls).toHaveLength(2);
  });

  it("refuses a step the session's script does not have, with the nearest one", async () => {
    const s = await serve();
    const err = await refusal(s, `rules: [{ at: { step: plna }, timeout: true }]`);
    expect(err?.code).toBe(Code.INVALID_ARGUMENT);
    expect(err?.message).toContain('has no step "plna" (did you mean "plan"?)');
  });

  it("refuses a rule with two faults, a point with two places, and chaos beside rules", async () => {
    const s = await serve();
    expect((await refusal(s, `rules: [{ at: { call: 1 }, timeout: true, hang: true }]`))?.message).toContain(
      "the rule has 2 faults (timeout, hang): expected one",
    );
    expect((await refusal(s, `rules: [{ at: { call: 1, step: plan }, hang: true }]`))?.message).toContain("at names 2 points (call, step): expected one");
    expect((await refusal(s, `rules: []\nchaos: { seed: 1, rates: { error: 0.5 } }`))?.message).toContain("the plan has both rules and chaos");
    expect((await refusal(s, `chaos: { seed: 1, rates: { error: 0.7, hang: 0.4 } }`))?.message).toContain("the rates sum to 1.1, more than 1");
    expect((await refusal(s, ``))?.message).toContain("the fault plan is empty");
  });
});
