#!/usr/bin/env node
// The Node HTTP load generator: one process, node:http with a keep-alive Agent whose maxSockets
// is the concurrency, fixed concurrency, bounded by a request count AND a duration, per-request
// latency by process.hrtime (request issued to response body ended). Prints one JSON line with
// the result on stdout, like loadgen.mjs.
//
//   node http-loadgen.mjs --target 127.0.0.1:PORT --body-file FILE
//     [--path /v1/chat/completions] [--method POST] [--concurrency 1] [--count 1000]
//     [--duration-ms 10000] [--warmup 0] [--timeout-ms 10000] [--expect TEXT]
//
// codes counts responses by HTTP status, and failures without one by error code (ECONNRESET,
// TIMEOUT, ...). With --expect, a 2xx response whose body lacks TEXT counts as mismatched.
import fs from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";
import { summarize } from "../lib/stats.mjs";

const { values: o } = parseArgs({
  options: {
    target: { type: "string" },
    path: { type: "string", default: "/v1/chat/completions" },
    method: { type: "string", default: "POST" },
    "body-file": { type: "string" },
    concurrency: { type: "string", default: "1" },
    count: { type: "string", default: "1000" },
    "duration-ms": { type: "string", default: "10000" },
    warmup: { type: "string", default: "0" },
    "timeout-ms": { type: "string", default: "10000" },
    expect: { type: "string" },
  },
});
const concurrency = Math.max(1, Number(o.concurrency));
const count = Math.min(Number(o.count), 5_000_000);
const durationMs = Math.min(Number(o["duration-ms"]), 600_000);
const warmup = Number(o.warmup);
const timeoutMs = Number(o["timeout-ms"]);
const [host, port] = [o.target.slice(0, o.target.lastIndexOf(":")), Number(o.target.slice(o.target.lastIndexOf(":") + 1))];
const body = o["body-file"] ? fs.readFileSync(o["body-file"]) : Buffer.alloc(0);
const expect = o.expect ? Buffer.from(o.expect) : null;

// A hard stop whatever happens: the run's bound plus the last request's timeout plus slack.
const hardStop = setTimeout(
  () => {
    process.stdout.write(`${JSON.stringify({ error: "http-loadgen hard stop: requests did not finish in time" })}\n`);
    process.exit(3);
  },
  durationMs + timeoutMs + 30_000,
);
hardStop.unref();

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
const headers = { "content-type": "application/json", "content-length": String(body.length) };
let socketsOpened = 0;
const seen = new WeakSet();

/** One request: resolves with { code, bytes, match } once the response body has ended. */
function one() {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r) => settled || ((settled = true), resolve(r));
    const req = http.request({ agent, host, port, method: o.method, path: o.path, headers }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => {
        const b = parts.length === 1 ? parts[0] : Buffer.concat(parts);
        done({ code: String(res.statusCode), bytes: b.length, match: !expect || b.includes(expect) });
      });
      res.on("error", (e) => done({ code: e.code ?? "ERROR", bytes: 0, match: false }));
    });
    req.on("socket", (s) => {
      if (!seen.has(s)) seen.add(s), socketsOpened++;
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", (e) => done({ code: e.code ?? "ERROR", bytes: 0, match: false }));
    req.end(body);
  });
}

async function run(total, untilMs, record) {
  let issued = 0;
  const lat = [];
  const codes = {};
  let bytes = 0;
  let ok = 0;
  let mismatched = 0;
  const worker = async () => {
    while (issued < total && performance.now() < untilMs) {
      issued++;
      const t0 = process.hrtime.bigint();
      const r = await one();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (record) {
        lat.push(ms);
        codes[r.code] = (codes[r.code] ?? 0) + 1;
        bytes += r.bytes;
        if (r.code[0] === "2") {
          ok++;
          if (!r.match) mismatched++;
        }
      }
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return { elapsedMs: Number(process.hrtime.bigint() - t0) / 1e6, lat, codes, ok, mismatched, bytes };
}

if (warmup > 0) await run(warmup, performance.now() + Math.min(durationMs, 10_000), false);
const warmSockets = socketsOpened;
const r = await run(count, performance.now() + durationMs, true);
const out = {
  tool: "http-loadgen",
  concurrency,
  calls: r.lat.length,
  ok: r.ok,
  mismatched: r.mismatched,
  codes: r.codes,
  elapsedMs: r.elapsedMs,
  rps: (r.lat.length / r.elapsedMs) * 1000,
  okRps: (r.ok / r.elapsedMs) * 1000,
  meanResponseBytes: r.lat.length ? r.bytes / r.lat.length : 0,
  latencyMs: summarize(r.lat),
  // Connections opened during warm-up and during the measured run (keep-alive: at most the
  // concurrency in all, unless the server closed some).
  socketsOpened: { warmup: warmSockets, measured: socketsOpened - warmSockets },
};
process.stdout.write(`${JSON.stringify(out)}\n`);
agent.destroy();
clearTimeout(hardStop);
process.exit(0);
