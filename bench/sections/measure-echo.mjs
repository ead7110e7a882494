// measureEcho: the server CPU of an echo reply streamed, against the same reply unary, on each
// front (gRPC GenerateStream, and the SSE of chat completions, Responses and Messages), for a
// large echo (960 KB: the "large streamed echoes" of test/fuzz/attacks.ts) and a typical one
// (10 KB). Issue 27, item 4: a streamed 960 KB echo cost 15-25x its unary call. The baseline is
// the same server answering the same request unary: batches of calls, interleaved (the order
// flips each round), the server's CPU time read before and after each batch.
import fs from "node:fs";
import path from "node:path";
import { argv, cfg, log } from "../lib/bench-config.mjs";
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

const fronts = ["grpc", "chat", "responses", "messages"];

/**
 * One server per front and size (so one's JIT state does not favour the next), under
 * `node --cpu-prof` with --echo-prof DIR (its profile: DIR/echo-<front>-<bytes>.cpuprofile, unary
 * and streamed calls together).
 */
async function startEchoServer(front, bytes) {
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  const prof = argv["echo-prof"] && path.resolve(argv["echo-prof"]);
  if (prof) fs.mkdirSync(prof, { recursive: true });
  const nodeArgs = prof ? ["--cpu-prof", "--cpu-prof-dir", prof, "--cpu-prof-name", `echo-${front}-${bytes}.cpuprofile`] : [];
  // The built-in default script echoes a PROBE-ECHO message ("PROBE-ECHO ok: <message>").
  const args = [
    MODELSTUB_BIN,
    "serve",
    "--grpc",
    `127.0.0.1:${grpcPort}`,
    "--http",
    `127.0.0.1:${httpPort}`,
    "--max-message-bytes",
    String(8 << 20),
    "--log-level",
    "error",
  ];
  const server = await startServer({
    name: `modelstub(echo ${front})`,
    node: true,
    nodeArgs,
    args,
    readyLine: /HTTP listening(?: on |","url":")http:\/\/([^\s"]+)/,
    timeoutMs: 30_000,
  });
  return { server, grpcPort, httpPort };
}

export async function measureEcho() {
  const { calls, warmup, sizes } = cfg.echo;
  const out = {
    calls,
    sizes: sizes.map(({ words, batch }) => ({ words, batch, echoBytes: Buffer.byteLength(`PROBE-ECHO ${"word ".repeat(words)}`), fronts: {} })),
  };
  if (!modelstubBuilt) return out;
  const { openGrpcPort } = await import(dist("src/port/grpc-port.js"));
  const { createControlClient } = await import(dist("src/port/control-client.js"));
  const { create } = await import("@bufbuild/protobuf");
  const { GenerateRequestSchema, Role } = await import(dist("gen/modelstub/v1/model_pb.js"));
  const options = { session: "echo", timeoutMs: 60_000 };
  for (const front of fronts) {
    for (const size of out.sizes) {
      const { server, grpcPort, httpPort } = await startEchoServer(front, size.echoBytes);
      const grpc = openGrpcPort(`127.0.0.1:${grpcPort}`);
      const control = createControlClient(`127.0.0.1:${grpcPort}`);
      try {
        const text = `PROBE-ECHO ${"word ".repeat(size.words)}`;
        const request = create(GenerateRequestSchema, { messages: [{ role: Role.USER, content: text }] });
        const bodies = [false, true].map((stream) => dialects[front]?.(stream, text)).map((d) => d && { path: d.path, body: JSON.stringify(d.body) });
        /** One call, read to its end; throws unless it answered whole. */
        const call = async (stream) => {
          if (front === "grpc") {
            if (!stream) return void (await grpc.generate(request, options));
            let frames = 0;
            for await (const _ of grpc.generateStream(request, options)) frames++;
            if (frames < 2) throw new Error(`GenerateStream: ${frames} frames`);
            return;
          }
          const { path: p, body } = bodies[stream ? 1 : 0];
          const res = await fetch(`http://127.0.0.1:${httpPort}${p}`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-modelstub-session": "echo" },
            body,
          });
          const answer = await res.text();
          if (res.status !== 200 || answer.length < size.words) throw new Error(`${front}: ${res.status} ${answer.slice(0, 200)}`);
        };
        /** The server's CPU ms per call over a batch of calls; the episode is deleted after, outside the measurement. */
        const cpuMs = async (stream) => {
          const before = await server.stats();
          for (let i = 0; i < size.batch; i++) await call(stream);
          const after = await server.stats();
          await control.call("DeleteSession", { session: "echo" });
          return (after.cpuUs - before.cpuUs) / 1000 / size.batch;
        };
        const runs = { unary: [], stream: [] };
        for (let i = 0; i < warmup; i++) for (const s of [false, true]) await cpuMs(s);
        for (let i = 0; i < calls; i++) {
          log(`echo ${front} ${size.echoBytes} bytes, round ${i + 1}/${calls} (${size.batch} calls a batch)`);
          for (const s of i % 2 ? [true, false] : [false, true]) runs[s ? "stream" : "unary"].push(await cpuMs(s));
        }
        const unaryMs = median(runs.unary);
        const streamMs = median(runs.stream);
        size.fronts[front] = {
          unaryCpuMs: round(unaryMs, 3),
          streamCpuMs: round(streamMs, 3),
          ratio: ratio(streamMs, unaryMs),
          unaryRuns: runs.unary.map((x) => round(x, 3)),
          streamRuns: runs.stream.map((x) => round(x, 3)),
        };
      } finally {
        grpc.close();
        control.close();
        await server.stop();
      }
    }
  }
  return out;
}
