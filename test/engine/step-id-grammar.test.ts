import { afterEach, describe, expect, it } from "vitest";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub, type Stub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code, type ModelPort } from "../../src/index.js";
import { startGrpcServer, type RunningGrpcServer } from "../../src/grpc/start-grpc-server.js";
import { createLogger } from "../../src/log/create-logger.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { rawRequest, startHttpStub, type HttpStub } from "../http/http-stub.js";
import { collect, userRequest } from "../support/requests.js";

const script = `
entries: [{ reply: main, repeat: true }]
steps:
  act: [{ reply: acted, repeat: true }]
`;
const grammar = "step ids are 1 to 128 characters of A-Z a-z 0-9 . _ : / -";
const long = "a".repeat(129);

/** A gRPC server whose call log lines are kept, with a client and a control client. */
interface Served {
  stub: Stub;
  server: RunningGrpcServer;
  port: ModelPort;
  control: ControlClient;
  lines: Record<string, unknown>[];
}

let served: Served | undefined;
let http: HttpStub | undefined;
afterEach(async () => {
  served?.port.close();
  served?.control.close();
  await served?.server.close(1000);
  await http?.close();
  served = undefined;
  http = undefined;
});

async function serve(): Promise<Served> {
  const stub = createStub({ script: loadScriptText(script, "test.yaml"), clock: createVirtualClock() });
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    sink: {
      write: (chunk: string) => {
        for (const l of chunk.trim().split("\n")) lines.push(JSON.parse(l) as Record<string, unknown>);
      },
    },
  });
  const server = await startGrpcServer({ stub, address: "127.0.0.1:0", logger });
  served = { stub, server, port: openGrpcPort(server.address), control: createControlClient(server.address), lines };
  return served;
}

/**
 * How many calls the session's episode holds, as ExportEpisode answers. A refused call opens no
 * session: allow_missing reads such a session's empty episode (0), as a check of "no calls".
 */
async function recordedCalls(s: Served, session: string): Promise<number> {
  return (await s.control.exportEpisode(session, { allowMissing: true })).calls;
}

describe("step ids outside the grammar", () => {
  it("are refused with INVALID_ARGUMENT naming the character, its position and the grammar (the request's step_id)", async () => {
    const s = await serve();
    await expect(s.port.generate(userRequest("x", { stepId: "act;drop" }), { session: "g1" })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: `invalid step id "act;drop" in the request's step_id: character 4 is ";" (U+003B); ${grammar}`,
    });
    expect(await recordedCalls(s, "g1")).toBe(0);
  });

  it("are refused with INVALID_ARGUMENT naming the length and the grammar (metadata x-modelstub-step)", async () => {
    const s = await serve();
    await expect(s.port.generate(userRequest("x"), { session: "g2", step: long })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: `invalid step id "${long}" in metadata x-modelstub-step: it is 129 characters long; ${grammar}`,
    });
    expect(await recordedCalls(s, "g2")).toBe(0);
  });

  it("are refused on GenerateStream too, before any frame, and the session records nothing", async () => {
    const s = await serve();
    const { frames, error } = await collect(s.port.generateStream(userRequest("x"), { session: "g3", step: "act drop" }));
    expect(frames).toEqual([]);
    expect(error).toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: `invalid step id "act drop" in metadata x-modelstub-step: character 4 is " " (U+0020); ${grammar}`,
    });
    // A good call afterwards is the session's first: the refused one took no sequence number.
    expect((await s.port.generate(userRequest("x"), { session: "g3", step: "act" })).id).toBe("gen-g3-1");
    expect(await recordedCalls(s, "g3")).toBe(1);
  });

  it("are logged as refusals with the status code and the message", async () => {
    const s = await serve();
    await s.port.generate(userRequest("x", { stepId: "act;drop" }), { session: "g4" }).catch(() => undefined);
    await expect.poll(() => s.lines.length).toBe(1);
    expect(s.lines[0]).toEqual({
      level: "info",
      msg: "call",
      transport: "grpc",
      method: "Generate",
      session: "g4",
      step: "act;drop",
      entry: "",
      outcome: "REFUSED",
      code: "INVALID_ARGUMENT",
      declared_ms: 0,
      message: `invalid step id "act;drop" in the request's step_id: character 4 is ";" (U+003B); ${grammar}`,
    });
  });

  it("name the first bad character counted in characters, and both problems when there are two", async () => {
    const port = createInProcessPort(createStub({ script: loadScriptText(script, "test.yaml") }));
    await expect(port.generate(userRequest("x"), { step: "plän" })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: `invalid step id "plän" in metadata x-modelstub-step: character 3 is "ä" (U+00E4); ${grammar}`,
    });
    await expect(port.generate(userRequest("x"), { step: `${long}!` })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: `invalid step id "${long}!" in metadata x-modelstub-step: character 130 is "!" (U+0021) and it is 130 characters long; ${grammar}`,
    });
  });

  it("are refused through the in-process port as well, leaving no session behind", async () => {
    const stub = createStub({ script: loadScriptText(script, "test.yaml") });
    const port = createInProcessPort(stub);
    await expect(port.generate(userRequest("x", { stepId: "act/../../x?" }), { session: "p1" })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    expect(stub.sessions()).toEqual([]);
    expect(stub.episode("p1").calls).toEqual([]);
  });

  it("report a bad session name first, as the transports do", async () => {
    const port = createInProcessPort(createStub({ script: loadScriptText(script, "test.yaml") }));
    await expect(port.generate(userRequest("x"), { session: "bad name", step: "act;drop" })).rejects.toMatchObject({
      code: Code.INVALID_ARGUMENT,
      details: expect.stringContaining("invalid session name"),
    });
  });
});

describe("step ids inside the grammar", () => {
  it("run as usual: 128 characters of every allowed kind is a step the script may lack (NOT_FOUND, recorded)", async () => {
    const s = await serve();
    const edge = `AZaz09._:/-${"x".repeat(117)}`;
    expect(edge).toHaveLength(128);
    await expect(s.port.generate(userRequest("x"), { session: "ok1", step: edge })).rejects.toMatchObject({ code: Code.NOT_FOUND });
    expect((await s.port.generate(userRequest("x"), { session: "ok1", step: "act" })).message?.content).toBe("acted");
    // An empty step id is "no step": the main list.
    expect((await s.port.generate(userRequest("x", { stepId: "" }), { session: "ok1" })).message?.content).toBe("main");
    expect(await recordedCalls(s, "ok1")).toBe(3);
  });
});

describe("step ids outside the grammar over HTTP", () => {
  const chat = { model: "m", messages: [{ role: "user", content: "go" }] };

  it("answer 400 invalid_argument with the message, record nothing and log a refusal", async () => {
    http = await startHttpStub(script);
    const r = await rawRequest(http.base, "POST", "/v1/chat/completions", chat, { "x-modelstub-session": "h1", "x-modelstub-step": "act;drop" });
    expect(r.status).toBe(400);
    const message = `invalid step id "act;drop" in header x-modelstub-step: character 4 is ";" (U+003B); ${grammar}`;
    expect(JSON.parse(String(r.body))).toEqual({ error: { message, type: "invalid_request_error", param: null, code: "invalid_argument" } });
    expect(http.stub.episode("h1").calls).toEqual([]);
    expect(http.stub.sessions()).toEqual([]);
    await expect.poll(() => http!.logs.length).toBe(1);
    expect(http.logs[0]).toMatchObject({ status: 400, session: "h1", step: "act;drop", entry: "", outcome: "REFUSED", code: "INVALID_ARGUMENT", message });
  });

  it("answer 400 for a step id of 129 characters, through the official client too", async () => {
    http = await startHttpStub(script);
    const err = await http
      .client({ session: "h2", step: long })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining(`in header x-modelstub-step: it is 129 characters long; ${grammar}`) });
    expect(http.stub.episode("h2").calls).toEqual([]);
  });

  it("leave a well-formed unknown step as it was: 404, recorded", async () => {
    http = await startHttpStub(script);
    const r = await rawRequest(http.base, "POST", "/v1/chat/completions", chat, { "x-modelstub-session": "h3", "x-modelstub-step": "acts" });
    expect(r.status).toBe(404);
    expect(JSON.parse(String(r.body)).error.message).toBe('the script has no step "acts" (did you mean "act"?); its steps are: act');
    expect(http.stub.episode("h3").calls).toHaveLength(1);
  });
});
