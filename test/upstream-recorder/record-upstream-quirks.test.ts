import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { Code, ModelCallError } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { collect, userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const sse = (chunks: unknown[]) => chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("");
const delta = (content: string, finish: string | null = null) => ({ model: "up-model", choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
const textOf = (frames: { frame: { case?: string; value?: unknown } }[]) => frames.map((f) => (f.frame.case === "textDelta" ? String(f.frame.value) : ""));
const codeOf = (err: unknown) => (err instanceof ModelCallError ? err.code : -1);

describe("modelstub record in front of upstreams that bend the OpenAI protocol", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });

  /** A loopback upstream answering the nth request with the nth handler; returns its origin and the request paths it saw. */
  async function upstreamAnswering(handlers: Handler[]): Promise<{ origin: string; paths: string[] }> {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? "");
      const handler = handlers[paths.length - 1];
      req.resume().on("end", () => (handler ? handler(req, res) : res.writeHead(500).end()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) });
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
  }

  async function recorderFor(baseUrl: string) {
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(baseUrl) });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(recorder, port);
    return { recorder, port };
  }

  const json =
    (status: number, body: unknown, type = "application/json"): Handler =>
    (_req, res) =>
      res.writeHead(status, { "content-type": type }).end(typeof body === "string" ? body : JSON.stringify(body));
  const stream =
    (body: string): Handler =>
    (_req, res) =>
      res.writeHead(200, { "content-type": "text/event-stream" }).end(body);

  it("posts to the chat-completions path under a base URL with a query, keeps the query, and names the upstream without it", async () => {
    const up = await upstreamAnswering([json(200, { choices: [{ message: { content: "hi" }, finish_reason: "stop" }] })]);
    const { recorder, port } = await recorderFor(`${up.origin}/openai/deployments/gpt4?api-version=2024-02-01&sig=QUERY-SECRET`);
    await port.generate(userRequest("hi"));
    expect(up.paths).toEqual(["/openai/deployments/gpt4/chat/completions?api-version=2024-02-01&sig=QUERY-SECRET"]);
    expect(recorder.scriptText()).toContain(`${up.origin}/openai/deployments/gpt4/chat/completions`);
    expect(recorder.scriptText()).not.toContain("QUERY-SECRET");
  });

  it("refuses an upstream URL holding a user and password, pointing to --upstream-key-env without repeating the password", () => {
    let message = "";
    try {
      createOpenAiUpstream("http://user:pw-SECRET@127.0.0.1:9/v1");
    } catch (err) {
      message = String(err);
    }
    expect(message).toContain("--upstream-key-env");
    expect(message).not.toContain("SECRET");
  });

  it("records a whole JSON answer to a streamed call as its reply, and streams it to the client by the words rule", async () => {
    const up = await upstreamAnswering([json(200, { model: "up-model", choices: [{ message: { content: "Hello there." }, finish_reason: "length" }] })]);
    const { recorder, port } = await recorderFor(`${up.origin}/v1`);
    const seen = await collect(port.generateStream(userRequest("hi")));
    expect(seen.error).toBeUndefined();
    expect(textOf(seen.frames).filter((t) => t !== "")).toEqual(["Hello ", "there."]);
    expect(recorder.scriptText()).toMatch(/text: Hello there\.\n\s+finish_reason: length/);
    expect(recorder.scriptText()).toContain('model "up-model"');
  });

  it("records a stream that ends with neither [DONE] nor a finish reason as a break, and one with a finish reason as whole", async () => {
    const up = await upstreamAnswering([stream(sse([delta("Hello "), delta("wor")])), stream(sse([delta("Hello "), delta("world", "stop")]))]);
    const { recorder, port } = await recorderFor(`${up.origin}/v1`);
    const cut = await collect(port.generateStream(userRequest("one")));
    expect(codeOf(cut.error)).toBe(Code.UNAVAILABLE);
    expect(textOf(cut.frames).join("")).toBe("Hello wor");
    const whole = await collect(port.generateStream(userRequest("two")));
    expect(whole.error).toBeUndefined();
    expect(textOf(whole.frames).join("")).toBe("Hello world");
    const script = recorder.scriptText();
    expect(script).toMatch(
      /text: Hello wor\n\s+break:\n\s+after_chunks: 2\n\s+then: error\n\s+error:\n\s+code: UNAVAILABLE\n\s+message: "?upstream stream ended without \[DONE\]"?\n/,
    );
    expect(script).toMatch(/- reply: Hello world\n|text: Hello world\n(?!\s+break)/);
    expect(loadScriptText(script, "r.yaml").entryCount).toBe(2);
  });

  it("takes an error's message from vLLM's, FastAPI's and a plain-text error field's bodies", async () => {
    const up = await upstreamAnswering([
      json(400, { object: "error", message: "maximum context length is 4096 tokens", type: "BadRequestError", code: 400 }),
      json(401, { error: "Invalid API key" }),
      json(404, { detail: "Not Found" }),
      json(422, { detail: [{ loc: ["body", "messages"], msg: "Field required", type: "missing" }] }),
    ]);
    const { recorder, port } = await recorderFor(`${up.origin}/v1`);
    for (const n of [1, 2, 3, 4]) await port.generate(userRequest(`call ${n}`)).catch(() => undefined);
    const messages = [...recorder.scriptText().matchAll(/message: "?(.*?)"?\n/g)].map((m) => m[1]);
    expect(messages).toEqual(["maximum context length is 4096 tokens", "Invalid API key", "Not Found", "body.messages: Field required"]);
  });

  it("reports malformed JSON from an upstream that answered as malformed, not as unreachable, in whole answers and streams", async () => {
    const up = await upstreamAnswering([json(200, "{not json"), stream(sse(["{not json"])), stream(sse([delta("Hi "), "{not json"]))]);
    const { recorder, port } = await recorderFor(`${up.origin}/v1`);
    expect(codeOf(await port.generate(userRequest("one")).catch((e: unknown) => e))).toBe(Code.UNAVAILABLE);
    expect(codeOf((await collect(port.generateStream(userRequest("two")))).error)).toBe(Code.UNAVAILABLE);
    const broken = await collect(port.generateStream(userRequest("three")));
    expect(textOf(broken.frames).join("")).toBe("Hi ");
    const messages = [...recorder.scriptText().matchAll(/message: "?(.*?)"?\n/g)].map((m) => m[1]!);
    expect(messages).toHaveLength(3);
    for (const m of messages) expect(m).toMatch(/^upstream answered malformed JSON: /);
    expect(recorder.scriptText()).not.toContain("unreachable");
  });
});
