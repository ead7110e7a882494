import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ModelCallError, startServer } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createGrpcUpstream } from "../../src/upstream-recorder/grpc-upstream.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { collect, userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/**
 * --upstream-timeout 1 s against upstreams that take longer than that in all, with gaps of
 * 100 ms (a tenth of it, so a loaded machine's stalls stay well inside it), or that fall silent
 * for good.
 */
const timeoutMs = 1000;
const gapMs = 100;
/** Twelve words, so twelve chunks 100 ms apart take 1.1 s: longer than the timeout in all. */
const words = "one two three four five six seven eight nine ten eleven twelve".split(" ").map((w, i, all) => (i < all.length - 1 ? `${w} ` : w));

type Handler = (res: ServerResponse) => void;
const event = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ model: "up-model", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Twelve chunks, 100 ms apart, then the end: 1.1 s in all. */
const slowStream: Handler = async (res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const [i, w] of words.entries()) {
    if (i > 0) await later(gapMs);
    res.write(event(w, i === words.length - 1 ? "stop" : null));
  }
  res.end("data: [DONE]\n\n");
};

/** Two chunks, then silence until the test closes the server. */
const stallingStream: Handler = (res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(event("one ") + event("two "));
};

/** Headers, then silence: no first byte of the answer. */
const silentStream: Handler = (res) => void res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();

/** A whole JSON answer sent in pieces 600 ms apart (each gap inside the timeout): 1.2 s in all. */
const slowUnary: Handler = async (res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.write('{"choices":[{"message":');
  await later(6 * gapMs);
  res.write('{"content":"late"},');
  await later(6 * gapMs);
  res.end('"finish_reason":"stop"}]}');
};

describe("modelstub record's --upstream-timeout", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  /** A recorder in front of a loopback upstream answering the nth request with the nth handler. */
  async function recorderFor(handlers: Handler[]) {
    let n = 0;
    const server = createServer((req: IncomingMessage, res) => void req.resume().on("end", () => handlers[n++]!(res)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) });
    const upstream = createOpenAiUpstream(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, { timeoutMs });
    const recorder = await startRecorder({ upstream, keepChunks: true });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(recorder, port);
    return { recorder, port };
  }

  const seen = async (stream: AsyncIterable<{ frame: { case?: string; value?: unknown } }>) => {
    const { frames, error } = await collect(stream);
    const text = frames.map((f) => (f.frame.case === "textDelta" ? String(f.frame.value) : "")).join("");
    return { text, code: error instanceof ModelCallError ? error.code : undefined, details: error instanceof ModelCallError ? error.details : undefined };
  };

  it("records a stream whose chunks come closer together than the timeout as whole, however long it takes in all", async () => {
    const { recorder, port } = await recorderFor([slowStream]);
    expect(await seen(port.generateStream(userRequest("slow")))).toEqual({ text: words.join(""), code: undefined, details: undefined });
    const script = recorder.scriptText();
    expect(script).toContain('- "eleven "\n');
    expect(script).not.toMatch(/timeout: true|break:/);
  });

  it("records a stream silent for longer than the timeout after two chunks as those chunks and DEADLINE_EXCEEDED, which replays the same", async () => {
    const { recorder, port } = await recorderFor([stallingStream]);
    const recorded = await seen(port.generateStream(userRequest("stalls")));
    expect(recorded).toEqual({ text: "one two ", code: Code.DEADLINE_EXCEEDED, details: `upstream stalled for more than ${timeoutMs} ms` });
    const script = recorder.scriptText();
    expect(script).toMatch(
      /break:\n\s+after_chunks: 2\n\s+then: error\n\s+error:\n\s+code: DEADLINE_EXCEEDED\n\s+message: upstream stalled for more than 1000 ms\n/,
    );
    const replay = await startServer({ script, clock: "virtual" });
    open.push(replay);
    const port2 = openGrpcPort(replay.grpcAddress);
    open.push(port2);
    expect(await seen(port2.generateStream(userRequest("stalls")))).toEqual(recorded);
  });

  it("records a stream that sends no chunk within the timeout as a timeout", async () => {
    const { recorder, port } = await recorderFor([silentStream]);
    expect((await seen(port.generateStream(userRequest("silent")))).code).toBe(Code.DEADLINE_EXCEEDED);
    expect(recorder.scriptText()).toContain("timeout: true");
  });

  it("still bounds a unary call as a whole: an answer still arriving when the timeout passes is a timeout", async () => {
    const { recorder, port } = await recorderFor([slowUnary]);
    const error = await port.generate(userRequest("slow")).catch((e: unknown) => e);
    expect(error instanceof ModelCallError ? error.code : undefined).toBe(Code.DEADLINE_EXCEEDED);
    expect(recorder.scriptText()).toContain("timeout: true");
  });

  it("bounds a gRPC upstream's stream the same way: gaps inside the timeout are recorded whole, a longer silence as a break", async () => {
    // On the real clock: twelve chunks 100 ms apart, then two chunks and a stall no deadline ends.
    const upstream = await startServer({
      clock: "real",
      script: `entries:
  - reply: { text: ${JSON.stringify(words.join(""))}, chunks: ${JSON.stringify(words)} }
    latency: { first_byte: 0ms, per_chunk: ${gapMs}ms }
  - reply: { text: "one two ", chunks: ["one ", "two "] }
    break: { after_chunks: 2, then: hang }
`,
    });
    const recorder = await startRecorder({ upstream: createGrpcUpstream(upstream.grpcAddress, { timeoutMs }), keepChunks: true });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(upstream, recorder, port);
    expect(await seen(port.generateStream(userRequest("slow")))).toEqual({ text: words.join(""), code: undefined, details: undefined });
    expect(await seen(port.generateStream(userRequest("stalls")))).toEqual({
      text: "one two ",
      code: Code.DEADLINE_EXCEEDED,
      details: `upstream stalled for more than ${timeoutMs} ms`,
    });
    const script = recorder.scriptText();
    expect(script).not.toContain("timeout: true");
    expect(script.match(/break:/g)).toHaveLength(1);
  });
});
