import { create, fromBinary } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { MessageSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub, type Stub } from "../../src/engine/create-stub.js";
import { episodeDifference } from "../../src/engine/episode-difference.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { driveScenario, scenarioScript } from "../support/determinism-scenario.js";
import { replayEpisode } from "../support/replay-episode.js";
import { collect, userRequest } from "../support/requests.js";

const stubOf = (text: string) => createStub({ script: loadScriptText(text, "script.yaml"), clock: createVirtualClock() });
const example = (name: string) => readFileSync(new URL(`../../examples/${name}`, import.meta.url), "utf8");

/** Byte equality, naming the first differing field on failure. */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array) {
  if (Buffer.from(actual).equals(Buffer.from(expected))) return;
  const diff = episodeDifference(fromBinary(EpisodeSchema, actual), fromBinary(EpisodeSchema, expected));
  expect.fail(`episode bytes differ: ${diff ?? "fields equal, bytes differ"}`);
}

/** from-episode, served, replayed: the bytes of the replay's episode (and the script made). */
async function roundTrip(bytes: Uint8Array, budgets: Record<number, number> = {}): Promise<{ bytes: Uint8Array; text: string; problems: string[] }> {
  const episode: Episode = fromBinary(EpisodeSchema, bytes);
  const { text, problems } = scriptFromEpisode(episode, "test.episode.binpb");
  const stub = stubOf(text);
  await replayEpisode(stub, episode, budgets);
  return { bytes: stub.episodeBytes(episode.session), text, problems };
}

/** Drives calls in a stub on `script`; returns the episode bytes of `session`. */
async function record(
  script: string,
  session: string,
  drive: (port: ReturnType<typeof createInProcessPort>, stub: Stub) => Promise<void>,
): Promise<Uint8Array> {
  const stub = stubOf(script);
  await drive(createInProcessPort(stub), stub);
  return stub.episodeBytes(session);
}

const swallow = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    () => undefined,
  );

describe("scriptFromEpisode()", () => {
  it("reproduces the determinism scenario byte for byte: tool calls, templates, a stream with per-chunk waits, an error with trailers, a timeout and a hang cut off by a deadline", async () => {
    const original = await record(scenarioScript, "scenario", (port) => driveScenario(port, "scenario", { hangDeadlineMs: 100 }));
    const { bytes, problems, text } = await roundTrip(original, { 7: 100 });
    expect(problems).toEqual([]);
    expectSameBytes(bytes, original);
    // Read back by the loader without complaint, and written for people: comments say where each entry came from.
    expect(text).toContain("# call 3, GenerateStream, step write: ok (answered by steps.write[0] in the recording)");
  });

  it("reproduces every failure kind, explicit chunks, chunk rates and entries reused with times, at the indices the recording names", async () => {
    const session = "kinds";
    const failures = example("failures.yaml");
    const o = { session };
    const original = await record(failures, session, async (port) => {
      await swallow(port.generate(userRequest("FAIL-ERROR now"), o));
      await swallow(port.generate(userRequest("FAIL-ERROR again"), o));
      await swallow(port.generate(userRequest("FAIL-TIMEOUT"), o));
      await swallow(port.generate(userRequest("FAIL-HANG"), { ...o, timeoutMs: 50 }));
      await collect(port.generateStream(userRequest("BREAK-ERROR"), o));
      await collect(port.generateStream(userRequest("BREAK-HANG"), { ...o, timeoutMs: 30 }));
      await collect(port.generateStream(userRequest("BREAK-DROP"), o));
      await swallow(port.generate(userRequest("BREAK-DROP unary"), o));
    });
    const { bytes, problems } = await roundTrip(original, { 4: 50, 6: 30 });
    expect(problems).toEqual([]);
    expectSameBytes(bytes, original);

    const streaming = await record(example("streaming.yaml"), session, async (port) => {
      for (const text of ["explicit", "chars", "whole", "anything", "more"]) await collect(port.generateStream(userRequest(text), o));
      await port.generate(userRequest("explicit unary"), o).catch(() => undefined);
    });
    const replay = await roundTrip(streaming);
    expect(replay.problems).toEqual([]);
    expectSameBytes(replay.bytes, streaming);
  });

  it("keeps tool call ids the script fixed, finish reasons, a default model, and unusual texts", async () => {
    const script = [
      "defaults: { model: house-model }",
      "entries:",
      '  - reply: { text: "line one\\n  two\\u007f\\t\\u001b[0m \'q\' \\"dq\\" # not a comment", finish_reason: length }',
      '  - reply: { tool_calls: [{ name: read, id: fixed-1, arguments: \'{"b": 1, "a": [1, 2.5]}\' }, { name: ls }] }',
      '  - reply: { text: "partial", tool_calls: [{ name: x, arguments: { k: "v v v" } }], finish_reason: stop }',
    ].join("\n");
    const original = await record(script, "odd", async (port) => {
      const o = { session: "odd" };
      await port.generate(userRequest("a", { model: "" }), o);
      await collect(port.generateStream(userRequest("b", { model: "" }), o));
      const convo = [create(MessageSchema, { role: Role.USER, content: "c" })];
      await collect(port.generateStream(userRequest("c", { messages: convo }), o));
    });
    const { bytes, problems, text } = await roundTrip(original);
    expect(problems).toEqual([]);
    expect(text).toContain("model: house-model");
    expectSameBytes(bytes, original);
  });

  it("says what it cannot reproduce: a text holding {{, entries used out of order, a fault plan", async () => {
    const templated = await record('entries:\n  - repeat: true\n    reply: "you said {{last_user}}"\n', "t", async (port) => {
      await port.generate(userRequest("{{x}}"), { session: "t" });
      await port.generate(userRequest("two"), { session: "t" });
    });
    const { problems, text } = scriptFromEpisode(fromBinary(EpisodeSchema, templated), "t.binpb");
    expect(problems.join("\n")).toMatch(/call 1: the reply text cannot be written: it holds "\{\{"/);
    // The script still loads: an error saying why stands in for the reply it cannot hold.
    expect(loadScriptText(text, "t.yaml").lists.get("")!.entries[0]!.action.kind).toBe("error");
    expect(problems.join("\n")).toMatch(
      /entries: the recording used its entries out of call order or gave one entry different answers.*1 call will name a different entry/,
    );

    const faulted = await record(
      "entries:\n  - reply: a\n  - reply: b\nfaults:\n  rules:\n    - { at: { call: 1 }, error: { code: UNAVAILABLE } }\n",
      "f",
      async (port) => {
        await swallow(port.generate(userRequest("1"), { session: "f" }));
        await port.generate(userRequest("2"), { session: "f" });
      },
    );
    const f = scriptFromEpisode(fromBinary(EpisodeSchema, faulted), "f.binpb");
    expect(f.problems.join("\n")).toMatch(/fault plan/);
    // What it does write still loads, and answers as the recording did.
    const stub = stubOf(f.text);
    const replayed = await replayEpisode(stub, fromBinary(EpisodeSchema, faulted));
    expect(replayed.map((r) => r.result.kind)).toEqual(["status", "ok"]);
  });
});
