#!/usr/bin/env node
// The fleet bench's load generator (bench/fleet.mjs): one process, one grpc-js channel,
// passthrough serializers over pre-encoded requests, fixed concurrency for a fixed time; worker w
// sends every call in session `fleet-bench-<offset + w mod sessions>` (x-modelstub-session), so a
// balancer spreads the workers over its instances. Prints one JSON line: calls, frames, elapsed.
//
//   node fleet-loadgen.mjs --target HOST:PORT --mode unary|stream --concurrency 32 --sessions 64 [--session-offset 0] --duration-ms 3000
import { parseArgs } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import grpc from "@grpc/grpc-js";
import { REPO } from "../test/fleet/fleet-lib.mjs";

const { values: o } = parseArgs({
  options: {
    target: { type: "string" },
    mode: { type: "string", default: "unary" },
    concurrency: { type: "string", default: "32" },
    sessions: { type: "string", default: "64" },
    "session-offset": { type: "string", default: "0" },
    "duration-ms": { type: "string", default: "3000" },
  },
});
const m = await import(`${REPO}/dist/gen/modelstub/v1/model_pb.js`);
const stream = o.mode === "stream";
const request = (schema, content) => Buffer.from(toBinary(schema, create(schema, { model: "modelstub", messages: [{ role: m.Role.USER, content }] })));
const payload = stream ? request(m.GenerateStreamRequestSchema, "STREAM please") : request(m.GenerateRequestSchema, "Say hello");
const path = stream ? "/modelstub.v1.ModelService/GenerateStream" : "/modelstub.v1.ModelService/Generate";
const pass = (b) => b;
const client = new grpc.Client(o.target, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
await new Promise((res, rej) => client.waitForReady(Date.now() + 10_000, (e) => (e ? rej(e) : res())));

const one = (md) =>
  new Promise((resolve) => {
    const deadline = Date.now() + 30_000;
    if (!stream)
      return client.makeUnaryRequest(path, pass, pass, payload, md, { deadline }, (err) =>
        resolve({ ok: !err, frames: err ? 0 : 1, code: err && `${err.code} ${String(err.details).slice(0, 120)}` }),
      );
    let frames = 0;
    const call = client.makeServerStreamRequest(path, pass, pass, payload, md, { deadline });
    call.on("data", () => frames++);
    call.on("error", (err) => resolve({ ok: false, frames, code: `${err.code} ${String(err.details).slice(0, 120)}` }));
    call.on("status", (s) => s.code === 0 && resolve({ ok: true, frames }));
  });

const sessions = Number(o.sessions);
const until = performance.now() + Number(o["duration-ms"]);
let calls = 0,
  failed = 0,
  frames = 0;
const codes = {};
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  Array.from({ length: Number(o.concurrency) }, async (_, w) => {
    const md = new grpc.Metadata();
    md.set("x-modelstub-session", `fleet-bench-${Number(o["session-offset"]) + (w % sessions)}`);
    while (performance.now() < until) {
      const r = await one(md);
      if (r.ok) calls++;
      else failed++, (codes[r.code] = (codes[r.code] ?? 0) + 1);
      frames += r.frames;
    }
  }),
);
const elapsedMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({ calls, failed, failedCodes: codes, loadgenCores: (cpu.user + cpu.system) / 1000 / elapsedMs, frames, elapsedMs, callsPerSec: (calls / elapsedMs) * 1000, framesPerSec: (frames / elapsedMs) * 1000 })}\n`,
);
client.close();
