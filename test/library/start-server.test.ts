// The library API through its public entry (src/index.ts, the package's "."): real servers on
// 127.0.0.1:0, a grpc-js client and the in-process port, episodes compared byte for byte.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { Code, createGrpcPort, EpisodeSchema, ModelCallError, Role, ScriptError, startServer, type ModelPort, type StubServer } from "../../src/index.js";

const script = `
entries:
  - reply: "Hello, {{last_user}}."
  - reply: "Second."
    latency: { first_byte: 250ms }
  - error: { code: UNAVAILABLE, message: overloaded }
`;

const running: StubServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(options: Parameters<typeof startServer>[0]): Promise<StubServer> {
  const server = await startServer(options);
  running.push(server);
  return server;
}

/** The same three calls on session `t1`: two replies, then the scripted error. */
async function converse(port: ModelPort): Promise<string[]> {
  const out: string[] = [];
  out.push((await port.generate({ messages: [{ role: Role.USER, content: "Ada" }] }, { session: "t1" })).message?.content ?? "");
  let streamed = "";
  for await (const frame of port.generateStream({ messages: [{ role: Role.USER, content: "again" }] }, { session: "t1" })) {
    if (frame.frame.case === "textDelta") streamed += frame.frame.value;
  }
  out.push(streamed);
  const err = await port.generate({ messages: [{ role: Role.USER, content: "once more" }] }, { session: "t1" }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ModelCallError);
  out.push(`${(err as ModelCallError).code} ${(err as ModelCallError).details}`);
  return out;
}

describe("startServer", () => {
  it("serves on a free port; gRPC and in-process calls give the same episode bytes", async () => {
    const overGrpc = await start({ script, clock: "virtual" });
    const inProcess = await start({ script, clock: "virtual" });
    expect(overGrpc.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(overGrpc.grpcAddress).not.toBe("127.0.0.1:0");
    expect(overGrpc.httpUrl).toBeUndefined();

    const a = await converse(overGrpc.client());
    const b = await converse(inProcess.inProcess());
    expect(a).toEqual(["Hello, Ada.", "Second.", `${Code.UNAVAILABLE} overloaded`]);
    expect(b).toEqual(a);

    const bytes = overGrpc.control.episodeBytes("t1");
    expect(Buffer.compare(Buffer.from(bytes), Buffer.from(inProcess.control.episodeBytes("t1")))).toBe(0);
    const episode = fromBinary(EpisodeSchema, bytes);
    expect(episode.session).toBe("t1");
    expect(episode.calls).toHaveLength(3);
  });

  it("takes a script object or a file, and the built-in default script without either", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-lib-"));
    try {
      const file = join(dir, "s.yaml");
      await import("node:fs/promises").then((fs) => fs.writeFile(file, "entries:\n  - reply: From a file.\n"));
      const fromObject = await start({ script: { entries: [{ reply: "From an object." }] } });
      const fromFile = await start({ scriptFile: file });
      const byDefault = await start({});
      expect((await fromObject.inProcess().generate({})).message?.content).toBe("From an object.");
      expect((await fromFile.client().generate({})).message?.content).toBe("From a file.");
      expect(byDefault.script.entries).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid script with the CLI's diagnostics, and listens nowhere", async () => {
    const err = await startServer({ script: "entries:\n  - reply: 42\n" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScriptError);
    expect((err as ScriptError).lines[0]).toMatch(/^<script>:2:\d+: entries\[0\]\.reply: /);
  });

  it("serves the HTTP front on a free port when asked", async () => {
    const server = await start({ script, http: "127.0.0.1:0", clock: "virtual" });
    expect(server.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${server.httpUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-modelstub-session": "h" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Bo" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("Hello, Bo.");
    expect(server.control.sessions().map((s) => s.name)).toEqual(["h"]);
  });

  it("with grpc: false serves in process and over HTTP only, and client() says why it cannot", async () => {
    const server = await start({ script, grpc: false, http: "127.0.0.1:0", clock: "virtual" });
    expect(server.grpcAddress).toBe("");
    expect(() => server.client()).toThrow(/no gRPC \(grpc: false\)/);
    expect(await converse(server.inProcess())).toEqual(["Hello, Ada.", "Second.", `${Code.UNAVAILABLE} overloaded`]);
    expect(server.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it("refuses a non-loopback address without a control token", async () => {
    await expect(startServer({ grpc: "0.0.0.0:0" })).rejects.toThrow(/without a token/);
  });
});

describe("createGrpcPort", () => {
  it("calls a server by its address once grpc-js is loaded at the first call; a port closed first never connects", async () => {
    const server = await start({ script, clock: "virtual" });
    createGrpcPort(server.grpcAddress).close(); // closed before any call: nothing was opened
    const port = createGrpcPort(server.grpcAddress);
    expect(await converse(port)).toEqual(["Hello, Ada.", "Second.", `${Code.UNAVAILABLE} overloaded`]);
    port.close();
    await expect(port.generate({}, { session: "t1" })).rejects.toThrow(/shut down|closed/i);
    expect(server.control.episode("t1").calls.length).toBe(3);
  });
});

describe("control", () => {
  it("loads a script into a session, verifies, resets and deletes it", async () => {
    const server = await start({ clock: "virtual" });
    const model = server.client();
    expect(await server.control.loadScript("t1", "entries:\n  - reply: Once.\n    times: 2\n")).toEqual({ entries: 1 });
    expect((await model.generate({}, { session: "t1" })).message?.content).toBe("Once.");
    expect(server.control.verify("t1")).toMatchObject({ satisfied: false });
    expect(server.control.sessions()).toEqual([{ name: "t1", calls: 1, running: 0, scriptName: "<script for session t1>" }]);
    expect(await server.control.reset("t1")).toBe(1);
    expect(fromBinary(EpisodeSchema, server.control.episodeBytes("t1")).calls).toHaveLength(0);
    expect(await server.control.deleteSession("t1")).toBe(0);
    const gone = await server.control.deleteSession("t1").catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ModelCallError);
    expect((gone as ModelCallError).code).toBe(Code.NOT_FOUND);
  });

  it("rejects an invalid script with a ScriptError; the session keeps its script", async () => {
    const server = await start({ script: "entries:\n  - reply: Kept.\n", clock: "virtual" });
    const err = await server.control.loadScript("t1", { entries: [{ reply: "x", bogus: 1 } as never] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScriptError);
    expect((err as ScriptError).message).toMatch(/^cannot load script <script for session t1>:\d+:\d+: entries\[0\]/);
    expect((await server.inProcess().generate({}, { session: "t1" })).message?.content).toBe("Kept.");
  });

  it("refuses a bad session name with INVALID_ARGUMENT", async () => {
    const server = await start({});
    expect(() => server.control.episodeBytes("no spaces")).toThrow(ModelCallError);
  });
});

describe("close", () => {
  it("writes every episode with calls to recordDir, closes the clients, and is idempotent", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-rec-"));
    try {
      const server = await startServer({ script, clock: "virtual", recordDir: dir });
      await server.client().generate({ messages: [{ role: Role.USER, content: "Cy" }] }, { session: "rec" });
      const expected = Buffer.from(server.control.episodeBytes("rec"));
      const closing = server.close();
      expect(server.close()).toBe(closing);
      await closing;
      expect((await readdir(dir)).sort()).toEqual([".episodes", "rec.episode.binpb", "rec.episode.json"]);
      expect(Buffer.compare(await readFile(join(dir, "rec.episode.binpb")), expected)).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("startServer refusals", () => {
  it("says which address it cannot listen on", async () => {
    const first = await start({ http: "127.0.0.1:0" });
    await expect(startServer({ grpc: first.grpcAddress })).rejects.toThrow(`cannot listen on ${first.grpcAddress}`);
    // The gRPC side binds, the HTTP side cannot: the gRPC side is closed again before the rejection.
    await expect(startServer({ http: first.httpAddress! })).rejects.toThrow(`cannot listen on ${first.httpAddress}`);
  });
});
