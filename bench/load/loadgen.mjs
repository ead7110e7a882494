#!/usr/bin/env node
// The Node load generator: one process, @grpc/grpc-js clients with passthrough serializers,
// fixed concurrency, bounded by a call count AND a duration, per-call latency by process.hrtime.
// Prints one JSON line with the result on stdout.
//
//   node loadgen.mjs --target 127.0.0.1:PORT --path /pkg.Svc/Method --payloads FILE
//     [--payload request|streamRequest|listModelsRequest] [--mode unary|stream]
//     [--concurrency 1] [--count 1000] [--duration-ms 10000] [--warmup 0]
//     [--deadline-ms 10000] [--connections 1]
import { parseArgs } from "node:util";
import grpc from "@grpc/grpc-js";
import { readPayloadFile } from "../lib/payloads.mjs";
import { summarize } from "../lib/stats.mjs";

const { values: o } = parseArgs({
  options: {
    target: { type: "string" },
    path: { type: "string" },
    payloads: { type: "string" },
    payload: { type: "string", default: "request" },
    mode: { type: "string", default: "unary" },
    concurrency: { type: "string", default: "1" },
    count: { type: "string", default: "1000" },
    "duration-ms": { type: "string", default: "10000" },
    warmup: { type: "string", default: "0" },
    "deadline-ms": { type: "string", default: "10000" },
    connections: { type: "string", default: "1" },
  },
});
const concurrency = Number(o.concurrency);
const count = Math.min(Number(o.count), 5_000_000);
const durationMs = Math.min(Number(o["duration-ms"]), 600_000);
const warmup = Number(o.warmup);
const deadlineMs = Number(o["deadline-ms"]);
const connections = Math.max(1, Number(o.connections));
const payload = readPayloadFile(o.payloads)[o.payload];
if (!payload) throw new Error(`no payload ${o.payload}`);

// A hard stop whatever happens: the run's bound plus the last call's deadline plus slack.
const hardStop = setTimeout(
  () => {
    process.stdout.write(`${JSON.stringify({ error: "loadgen hard stop: calls did not finish in time" })}\n`);
    process.exit(3);
  },
  durationMs + deadlineMs + 30_000,
);
hardStop.unref();

const pass = (b) => b;
const clients = Array.from(
  { length: connections },
  () =>
    new grpc.Client(o.target, grpc.credentials.createInsecure(), {
      "grpc.use_local_subchannel_pool": 1, // one connection per client
      "grpc.max_receive_message_length": -1,
    }),
);

await Promise.all(clients.map((c) => new Promise((res, rej) => c.waitForReady(Date.now() + 10_000, (err) => (err ? rej(err) : res())))));

const codeName = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

function unaryCall(client) {
  return new Promise((resolve) => {
    client.makeUnaryRequest(o.path, pass, pass, payload, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err) => {
      resolve({ code: err ? err.code : 0, frames: err ? 0 : 1 });
    });
  });
}

function streamCall(client) {
  return new Promise((resolve) => {
    let frames = 0;
    const call = client.makeServerStreamRequest(o.path, pass, pass, payload, new grpc.Metadata(), { deadline: Date.now() + deadlineMs });
    call.on("data", () => frames++);
    call.on("error", (err) => resolve({ code: err.code, frames }));
    call.on("status", (s) => s.code === 0 && resolve({ code: 0, frames }));
  });
}

const one = o.mode === "stream" ? streamCall : unaryCall;

async function run(total, untilMs, record) {
  let issued = 0;
  const lat = [];
  const codes = {};
  let frames = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let lastIssue = 0n;
  const worker = async (w) => {
    const client = clients[w % connections];
    while (issued < total && performance.now() < untilMs) {
      issued++;
      const t0 = process.hrtime.bigint();
      lastIssue = t0;
      if (++inFlight > maxInFlight) maxInFlight = inFlight;
      const r = await one(client);
      inFlight--;
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (record) {
        lat.push(ms);
        const name = codeName[r.code] ?? String(r.code);
        codes[name] = (codes[name] ?? 0) + 1;
        frames += r.frames;
      }
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return { elapsedMs: Number(process.hrtime.bigint() - t0) / 1e6, lat, codes, frames, maxInFlight, issueSpanMs: Number(lastIssue - t0) / 1e6 };
}

if (warmup > 0) await run(warmup, performance.now() + Math.min(durationMs, 10_000), false);
const r = await run(count, performance.now() + durationMs, true);
const ok = r.codes.OK ?? 0;
const out = {
  tool: "node-loadgen",
  mode: o.mode,
  concurrency,
  connections,
  calls: r.lat.length,
  ok,
  codes: r.codes,
  elapsedMs: r.elapsedMs,
  rps: (r.lat.length / r.elapsedMs) * 1000,
  okRps: (ok / r.elapsedMs) * 1000,
  frames: r.frames,
  framesPerSec: (r.frames / r.elapsedMs) * 1000,
  latencyMs: summarize(r.lat),
  // The most calls this client had open at once, and when it opened the last one.
  maxInFlight: r.maxInFlight,
  lastIssueMs: r.issueSpanMs,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
for (const c of clients) c.close();
clearTimeout(hardStop);
process.exit(0);
