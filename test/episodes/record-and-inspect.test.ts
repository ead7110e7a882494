import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { Code } from "../../src/index.js";
import { driveScenario, goldenPath, scenarioPath } from "../support/determinism-scenario.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { startStubServer } from "../support/start-stub-server.js";

describe("ControlService", () => {
  it("loads a script into one session, rejects an invalid one with INVALID_ARGUMENT and keeps the previous one", async () => {
    const s = await startStubServer("entries:\n  - repeat: true\n    reply: base\n");
    try {
      const loaded = await s.control.call("LoadScript", { session: "mine", script: "entries:\n  - repeat: true\n    reply: mine\n", sourceName: "mine.yaml" });
      expect(loaded.entries).toBe(1);
      expect((await s.port.generate(userRequest("x"), { session: "mine" })).message?.content).toBe("mine");
      expect((await s.port.generate(userRequest("x"), { session: "other" })).message?.content).toBe("base");
      await expect(s.control.call("LoadScript", { session: "mine", script: "entries:\n  - reply: 5\n", sourceName: "bad.yaml" })).rejects.toMatchObject({
        code: Code.INVALID_ARGUMENT,
        details: expect.stringContaining("bad.yaml:2:12: entries[0].reply"),
      });
      expect((await s.port.generate(userRequest("x"), { session: "mine" })).message?.content).toBe("mine");
    } finally {
      await s.close();
    }
  });

  it("verifies a session: lists what was never used, like a mock's pending list", async () => {
    const s = await startStubServer("entries:\n  - reply: one\n  - name: second\n    times: 2\n    reply: two\n  - repeat: true\n    reply: always\n");
    try {
      await s.port.generate(userRequest("x"), { session: "v" });
      await s.port.generate(userRequest("x"), { session: "v" });
      const v = await s.control.call("VerifySession", { session: "v" });
      expect(v.satisfied).toBe(false);
      expect(v.unused.map((u) => [u.entry, u.remaining])).toEqual([["entries[1]", 1]]);
      expect(v.message).toBe('1 scripted entry was not used up: entries[1] (second): reply "two" (1 left)');
      await s.port.generate(userRequest("x"), { session: "v" });
      expect((await s.control.call("VerifySession", { session: "v" })).satisfied).toBe(true);
    } finally {
      await s.close();
    }
  });

  it("resets a session and lists sessions", async () => {
    const s = await startStubServer("entries:\n  - reply: one\n");
    try {
      await s.port.generate(userRequest("x"), { session: "a" });
      await s.port.generate(userRequest("x"), { session: "b" });
      const list = await s.control.call("ListSessions", {});
      expect(list.sessions.map((x) => [x.name, x.calls])).toEqual([
        ["a", 1],
        ["b", 1],
      ]);
      await s.control.call("ResetSession", { session: "a" });
      expect((await s.port.generate(userRequest("x"), { session: "a" })).message?.content).toBe("one");
      const ep = await s.control.call("GetEpisode", { session: "a" });
      expect(ep.episode?.calls.map((c) => Number(c.sequence))).toEqual([1]);
      // encodeEpisode assembles the bytes from encoded calls: pin them to protobuf-es's own encoding.
      expect(Buffer.from(ep.episodeBinpb)).toEqual(Buffer.from(toBinary(EpisodeSchema, ep.episode!)));
    } finally {
      await s.close();
    }
  });
});

describe("modelstub serve --record-dir", () => {
  it("writes a session's episode on reset and every episode at shutdown, whole and atomically", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-record-"));
    const { child, address, exit } = await startServeProcess(["--script", scenarioPath, "--grpc", "127.0.0.1:0", "--record-dir", dir]);
    const port = openGrpcPort(address);
    const control = createControlClient(address);
    try {
      await driveScenario(port, "scenario");
      await expect.poll(async () => (await control.call("GetEpisode", { session: "scenario" })).episode?.calls.length).toBe(7);
      await control.call("ResetSession", { session: "scenario" });
      await expect.poll(async () => (await readdir(dir)).sort()).toEqual([".episodes", "scenario.episode.binpb", "scenario.episode.json"]);
      expect(Buffer.from(await readFile(join(dir, "scenario.episode.binpb")))).toEqual(await readFile(goldenPath));
      await port.generate(userRequest("x"), { session: "late", step: "flaky" }).catch(() => undefined);
    } finally {
      port.close();
      control.close();
      child.kill("SIGTERM");
    }
    expect(await exit).toBe(0);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual([".episodes", "late.episode.binpb", "late.episode.json", "scenario.episode.binpb", "scenario.episode.json"]);
    expect(fromBinary(EpisodeSchema, await readFile(join(dir, "late.episode.binpb"))).calls).toHaveLength(1);
    expect(JSON.parse(await readFile(join(dir, "late.episode.json"), "utf8")).session).toBe("late");
  });
});

describe("modelstub serve --record-dir, ResetSession and LoadScript", () => {
  async function startRecording() {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-record-"));
    const scriptPath = join(dir, "script.yaml");
    // A long reply makes an episode that takes a while to write: long enough that reading the
    // file as soon as an answer arrives would catch a write still in flight.
    await writeFile(scriptPath, `entries:\n  - repeat: true\n    reply: hi\nsteps:\n  long:\n    - repeat: true\n      reply: "${"lorem ".repeat(40_000)}"\n`);
    const records = join(dir, "episodes");
    const served = await startServeProcess(["--script", scriptPath, "--grpc", "127.0.0.1:0", "--record-dir", records]);
    const port = openGrpcPort(served.address);
    const control = createControlClient(served.address);
    const episodeBytes = async (session: string) => Buffer.from((await control.call("GetEpisode", { session })).episodeBinpb);
    const recorded = async (session: string) => Buffer.from(await readFile(join(records, `${session}.episode.binpb`)));
    const stop = async () => {
      port.close();
      control.close();
      served.child.kill("SIGTERM");
      expect(await served.exit).toBe(0);
    };
    return { port, control, episodeBytes, recorded, records, stop };
  }

  it("answer once the closed episode is written: after two resets back to back the file holds the last closed episode", async () => {
    const { port, control, episodeBytes, recorded, records, stop } = await startRecording();
    try {
      for (const t of ["a", "b", "c"]) await port.generate(userRequest(t), { session: "twice" });
      expect((await control.call("ResetSession", { session: "twice" })).calls).toBe(3);
      // About 1.7 MB of episode: GetEpisode carries it twice (decoded and as bytes) within 4 MiB.
      for (let i = 0; i < 7; i++) await port.generate(userRequest(`d${i}`), { session: "twice", step: "long" });
      const last = await episodeBytes("twice");
      const resets = await Promise.all([control.call("ResetSession", { session: "twice" }), control.call("ResetSession", { session: "twice" })]);
      expect(resets.map((r) => r.calls).sort((a, b) => a - b)).toEqual([0, 7]);
      // No polling: the answers came after the write. Buffer.equals: a deep equality over MBs is slow.
      expect((await recorded("twice")).equals(last)).toBe(true);
      expect(JSON.parse(await readFile(join(records, "twice.episode.json"), "utf8")).calls).toHaveLength(7);
    } finally {
      await stop();
    }
  });

  it("LoadScript writes the episode it closes, before it answers", async () => {
    const { port, control, episodeBytes, recorded, stop } = await startRecording();
    try {
      await port.generate(userRequest("a"), { session: "reload" });
      await port.generate(userRequest("b"), { session: "reload" });
      const before = await episodeBytes("reload");
      await control.call("LoadScript", { session: "reload", script: "entries:\n  - reply: new\n", sourceName: "new.yaml" });
      expect(await recorded("reload")).toEqual(before);
      expect(fromBinary(EpisodeSchema, before).calls).toHaveLength(2);
    } finally {
      await stop();
    }
  });
});

describe("modelstub episode", () => {
  it("prints a file as JSON, fetches from a running server, and compares byte for byte", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-episode-"));
    const shown = await runCli(["episode", goldenPath]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).calls).toHaveLength(7);

    const s = await startStubServer("entries:\n  - reply: hello\n");
    try {
      await s.port.generate(userRequest("x"), { session: "cli" });
      const out = join(dir, "cli.binpb");
      const fetched = await runCli(["episode", "--addr", s.address, "--session", "cli", "--out", out]);
      expect(fetched.code).toBe(0);
      expect(JSON.parse(fetched.stdout).calls[0].response.message.content).toBe("hello");
      expect(Buffer.from(await readFile(out))).toEqual(Buffer.from(s.stub.episodeBytes("cli")));
    } finally {
      await s.close();
    }

    const same = await runCli(["episode", "compare", goldenPath, goldenPath]);
    expect([same.code, same.stdout.trim()]).toEqual([0, expect.stringMatching(/^identical: \d+ bytes, 7 calls$/)]);

    const changed = fromBinary(EpisodeSchema, await readFile(goldenPath));
    changed.calls[1]!.response!.message!.content = "something else";
    const other = join(dir, "changed.binpb");
    await writeFile(other, toBinary(EpisodeSchema, changed));
    const differ = await runCli(["episode", "compare", goldenPath, other]);
    expect(differ.code).toBe(1);
    expect(differ.stdout).toContain('differ: calls[1].response.message.content: "I see these files: a.txt\\nb.txt\\n" != "something else"');
  });
});
