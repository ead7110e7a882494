// measureEcho: the server CPU of one large echo reply streamed, against the same reply unary, on
// each front (gRPC GenerateStream, and the SSE of chat completions, Responses and Messages).
// Issue 27, item 4: a streamed 960 KB echo cost 15-25x its unary call. The baseline is the same
// server answering the same request unary, call by call interleaved (the order flips each call).
import path from "node:path";
import { cfg, log } from "../lib/bench-config.mjs";
import { modelstubBuilt } from "../lib/bench-setup.mjs";
import { MODELSTUB_BIN, REPO_DIR } from "../lib/paths.mjs";
import { freePort, startServer } from "../lib/proc.mjs";
import { median, ratio, round } from "../lib/stats.mjs";

const dist = (p) => path.join(REPO_DIR, "dist", p);

/** The request body of an echo call in each HTTP dialect. */
const dialects = {
  chat: (stream, text) => ({ path: "/v1/chat/completions", body: { model: "m", stream, messages: [{ role: "user", content: text }] } }),
  responses: (stream, text) => ({ path: "/v1/responses", body: { model: "m", stream, input: text } }),
  messages: (stream, text) => ({ path: "/v1/messages", body: { model: "m", stream, max_tokens: 1024, messages: [{ role: "user", content: text }] } }),
};

export async function measureEcho() {
  const { calls, warmup, words } = cfg.echo;
  const text = `PROBE-ECHO ${"word ".repeat(words)}`;
  const out = { echoBytes: Buffer.byteLength(text), calls, fronts: {} };
  if (!modelstubBuilt) return out;
  const { createGrpcPort } = await import(dist("src/port/grpc-port.js"));
  const { createControlClient } = await import(dist("src/port/control-client.js"));
  const { create } = await import("@bufbuild/protobuf");
  const { GenerateRequestSchema, Role } = await import(dist("gen/modelstub/v1/model_pb.js"));
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  // The built-in default script echoes a PROBE-ECHO message ("PROBE-ECHO ok: <message>").
  const args = [MODELSTUB_BIN, "serve", "--grpc", `127.0.0.1:${grpcPort}`, "--http", `127.0.0.1:${httpPort}`, "--max-message-bytes", String(8 << 20), "--log-level", "error"];
  const server = await startServer({ name: "modelstub(echo)", node: true, args, readyLine: /HTTP listening on http:\/\/(\S+)/, timeoutMs: 30_000 });
  const grpc = createGrpcPort(`127.0.0.1:${grpcPort}`);
  const control = createControlClient(`127.0.0.1:${grpcPort}`);
  const request = create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: text }] });
  const options = { session: "echo", timeoutMs: 60_000 };
  /** One call, read to its end; throws unless it answered whole. */
  const call = async (front, stream) => {
    if (front === "grpc") {
      if (!stream) return void (await grpc.generate(request, options));
      let frames = 0;
      for await (const _ of grpc.generateStream(request, options)) frames++;
      if (frames < 2) throw new Error(`GenerateStream: ${frames} frames`);
      return;
    }
    const { path: p, body } = dialects[front](stream, text);
    const res = await fetch(`http://127.0.0.1:${httpPort}${p}`, { method: "POST", headers: { "content-type": "application/json", "x-modelstub-session": "echo" }, body: JSON.stringify(body) });
    const answer = await res.text();
    if (res.status !== 200 || answer.length < words) throw new Error(`${front}: ${res.status} ${answer.slice(0, 200)}`);
  };
  /** The server's CPU ms for one call; its episode is deleted after, outside the measurement. */
  const cpuMs = async (front, stream) => {
    const before = await server.stats();
    await call(front, stream);
    const after = await server.stats();
    await control.call("DeleteSession", { session: "echo" });
    return (after.cpuUs - before.cpuUs) / 1000;
  };
  try {
    for (const front of ["grpc", "chat", "responses", "messages"]) {
      const runs = { unary: [], stream: [] };
      for (let i = 0; i < warmup; i++) for (const s of [false, true]) await cpuMs(front, s);
      for (let i = 0; i < calls; i++) {
        log(`echo ${front} ${i + 1}/${calls}`);
        for (const s of i % 2 ? [true, false] : [false, true]) runs[s ? "stream" : "unary"].push(await cpuMs(front, s));
      }
      const unaryMs = median(runs.unary);
      const streamMs = median(runs.stream);
      out.fronts[front] = { unaryCpuMs: round(unaryMs, 2), streamCpuMs: round(streamMs, 2), ratio: ratio(streamMs, unaryMs), unaryRuns: runs.unary.map((x) => round(x, 2)), streamRuns: runs.stream.map((x) => round(x, 2)) };
    }
  } finally {
    grpc.close();
    control.close();
    await server.stop();
  }
  return out;
}
