// Longer than 250 lines because it is a session's whole life: DeleteSession and the idle
// eviction of serve --session-idle-timeout, both against real servers.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome, type Episode } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code } from "../../src/index.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { startStubServer, type StubServer } from "../support/start-stub-server.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** Replies to anything, except that a message holding "hang" never gets an answer. */
const script = `
entries:
  - match: { contains: hang }
    hang: true
    repeat: true
  - reply: "hello {{session}}"
    repeat: true
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-sessions-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let server: StubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function sessionNames(control: ControlClient): Promise<string[]> {
  return (await control.call("ListSessions", {})).sessions.map((s) => s.name);
}

async function runningIn(control: ControlClient, session: string): Promise<number> {
  return (await control.call("ListSessions", {})).sessions.find((s) => s.name === session)?.running ?? 0;
}

describe("ControlService.DeleteSession", () => {
  it("frees the slot of a session, so a server at --max-sessions takes a new one", async () => {
    server = await startStubServer(script, { clock: "virtual", maxSessions: 2 });
    await server.port.generate(userRequest("hi"), { session: "a" });
    await server.port.generate(userRequest("hi"), { session: "b" });
    await expect(server.port.generate(userRequest("hi"), { session: "c" })).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED });

    expect(await server.control.call("DeleteSession", { session: "a" })).toMatchObject({ calls: 1 });

    expect(await sessionNames(server.control)).toEqual(["b"]);
    await expect(server.port.generate(userRequest("hi"), { session: "c" })).resolves.toMatchObject({ message: { content: "hello c" } });
    expect(await sessionNames(server.control)).toEqual(["b", "c"]);
  });

  it("says in the session cap's message how to free slots", async () => {
    server = await startStubServer(script, { clock: "virtual", maxSessions: 1 });
    await server.port.generate(userRequest("hi"), { session: "a" });
    const refused = server.port.generate(userRequest("hi"), { session: "b" });
    await expect(refused).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED, details: expect.stringContaining("ControlService.DeleteSession") });
    await expect(refused).rejects.toMatchObject({ details: expect.stringContaining("--session-idle-timeout") });
    await expect(refused).rejects.toMatchObject({ details: expect.stringContaining("--max-sessions") });
  });

  it("cuts off the calls running in the session with CANCELLED and records them in the episode it closes", async () => {
    const closed: Episode[] = [];
    // The real clock: a hang on the virtual one ends at the caller's deadline at once.
    server = await startStubServer(script, { clock: "real", onEpisodeClosed: (e) => void closed.push(e) });
    await server.port.generate(userRequest("hi"), { session: "h" });
    const hanging = server.port.generate(userRequest("hang"), { session: "h", timeoutMs: 30_000 }).catch((e: unknown) => e);
    await expect.poll(() => runningIn(server!.control, "h"), { timeout: testTimeoutMs(15_000) }).toBe(1);

    expect(await server.control.call("DeleteSession", { session: "h" })).toMatchObject({ calls: 2 });

    expect(await hanging).toMatchObject({ code: Code.CANCELLED, details: 'session "h" was deleted while this call was running' });
    expect(closed).toHaveLength(1);
    expect(closed[0]!.calls.map((c) => [Number(c.sequence), c.outcome])).toEqual([
      [1, Outcome.OK],
      [2, Outcome.CANCELLED],
    ]);
    expect(closed[0]!.calls[1]!.status?.message).toBe('session "h" was deleted while this call was running');
  });

  it("starts a session used again after its deletion on a new episode, numbered from 1", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    await server.port.generate(userRequest("one"), { session: "again" });
    await server.port.generate(userRequest("two"), { session: "again" });
    await server.control.call("DeleteSession", { session: "again" });

    const reply = await server.port.generate(userRequest("three"), { session: "again" });

    expect(reply.id).toBe("gen-again-1");
    const episode = (await server.control.call("GetEpisode", { session: "again" })).episode!;
    expect(episode.calls.map((c) => [Number(c.sequence), Number(c.startMs), c.request?.messages[0]?.content])).toEqual([[1, 0, "three"]]);
  });

  it("answers NOT_FOUND, naming the session, for a session the server does not keep", async () => {
    server = await startStubServer(script, { clock: "virtual" });
    await expect(server.control.call("DeleteSession", { session: "never" })).rejects.toMatchObject({
      code: Code.NOT_FOUND,
      details: expect.stringContaining('no session "never"'),
    });
    await server.port.generate(userRequest("hi"), { session: "once" });
    await server.control.call("DeleteSession", { session: "once" });
    await expect(server.control.call("DeleteSession", { session: "once" })).rejects.toMatchObject({ code: Code.NOT_FOUND });
  });

  it("writes the closed episode to --record-dir before it answers", async () => {
    const records = join(dir, "deleted");
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--clock", "virtual", "--record-dir", records]);
    const port = openGrpcPort(s.address);
    const control = createControlClient(s.address);
    try {
      await port.generate(userRequest("PROBE-ECHO hi"), { session: "gone" });
      expect(await control.call("DeleteSession", { session: "gone" })).toMatchObject({ calls: 1 });
      const episode = fromBinary(EpisodeSchema, await readFile(join(records, "gone.episode.binpb")));
      expect(episode.calls.map((c) => c.response?.message?.content)).toEqual(["PROBE-ECHO ok: PROBE-ECHO hi"]);
      expect(await sessionNames(control)).toEqual([]);
    } finally {
      port.close();
      control.close();
      s.child.kill("SIGTERM");
    }
    expect(await s.exit).toBe(0);
  });
});

describe("modelstub serve --session-idle-timeout", () => {
  it("evicts a session idle for that long, writes its episode, logs it, and leaves one with a call running", async () => {
    const scriptPath = join(dir, "idle.yaml");
    await writeFile(scriptPath, script);
    const records = join(dir, "evicted");
    const s = await startServeProcess([
      "--script",
      scriptPath,
      "--grpc",
      "127.0.0.1:0",
      "--clock",
      "virtual",
      "--record-dir",
      records,
      "--session-idle-timeout",
      "300ms",
      "--log-format",
      "json",
    ]);
    const port = openGrpcPort(s.address);
    const control = createControlClient(s.address);
    const stop = new AbortController();
    try {
      // The busy session's call starts before the idle session's last use and runs throughout.
      const busy = port.generate(userRequest("hang"), { session: "busy", signal: stop.signal }).catch((e: { code: number }) => e.code);
      await expect.poll(() => runningIn(control, "busy"), { timeout: testTimeoutMs(15_000) }).toBe(1);
      await port.generate(userRequest("hi"), { session: "idle" });

      await expect.poll(() => sessionNames(control), { timeout: testTimeoutMs(15_000), interval: 50 }).toEqual(["busy"]);

      expect(await runningIn(control, "busy")).toBe(1);
      // The slot is freed first; the episode reaches the disk a moment later.
      const contents = () =>
        readFile(join(records, "idle.episode.binpb")).then(
          (b) => fromBinary(EpisodeSchema, b).calls.map((c) => c.response?.message?.content),
          () => undefined,
        );
      await expect.poll(contents, { timeout: testTimeoutMs(15_000), interval: 50 }).toEqual(["hello idle"]);
      await expect.poll(() => s.output().stderr).toMatch(/"msg":"session evicted".*"session":"idle".*"calls":1/);
      stop.abort();
      expect(await busy).toBe(Code.CANCELLED);
    } finally {
      port.close();
      control.close();
      s.child.kill("SIGTERM");
    }
    expect(await s.exit).toBe(0);
    expect(s.output().stderr.match(/"msg":"session evicted","session":"idle"/g)).toHaveLength(1);
  });

  it("never changes what an episode records: the evicted episode, and the one a reused session starts, equal an unevicted stub's", async () => {
    const scriptPath = join(dir, "idle-bytes.yaml");
    await writeFile(scriptPath, script);
    const records = join(dir, "evicted-bytes");
    // The same calls on a stub that never evicts: the bytes every episode must have.
    const reference = createStub({ script: loadScriptText(script, "idle-bytes.yaml"), clock: createVirtualClock() });
    const inProcess = createInProcessPort(reference);
    await inProcess.generate(userRequest("hi"), { session: "s" });
    await inProcess.generate(userRequest("again"), { session: "s" });
    const expected = reference.episodeBytes("s");

    // Long enough that a loaded machine never splits the two calls of an episode by evicting between them.
    const s = await startServeProcess([
      "--script",
      scriptPath,
      "--grpc",
      "127.0.0.1:0",
      "--clock",
      "virtual",
      "--record-dir",
      records,
      "--session-idle-timeout",
      "1500ms",
    ]);
    const port = openGrpcPort(s.address);
    const control = createControlClient(s.address);
    try {
      await port.generate(userRequest("hi"), { session: "s" });
      await port.generate(userRequest("again"), { session: "s" });
      await expect.poll(() => sessionNames(control), { timeout: testTimeoutMs(15_000), interval: 50 }).toEqual([]);
      // The slot is freed first; the episode reaches the disk a moment later.
      const file = join(records, "s.episode.binpb");
      await expect
        .poll(
          () =>
            readFile(file).then(
              (b) => new Uint8Array(b),
              () => undefined,
            ),
          { timeout: testTimeoutMs(15_000), interval: 50 },
        )
        .toEqual(expected);
      await rm(file);

      // Used again: a new episode, as after a reset, which is evicted in turn: the same calls
      // recorded the same bytes, numbered from 1 again.
      await port.generate(userRequest("hi"), { session: "s" });
      await port.generate(userRequest("again"), { session: "s" });
      await expect
        .poll(
          () =>
            readFile(file).then(
              (b) => new Uint8Array(b),
              () => undefined,
            ),
          { timeout: testTimeoutMs(15_000), interval: 50 },
        )
        .toEqual(expected);
    } finally {
      port.close();
      control.close();
      s.child.kill("SIGTERM");
    }
    expect(await s.exit).toBe(0);
  });

  it("refuses a value that is not a duration", async () => {
    const bad = await runCli(["serve", "--grpc", "127.0.0.1:0", "--session-idle-timeout", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--session-idle-timeout must be a duration like 10m or 30s, not "soon"');
  });
});
