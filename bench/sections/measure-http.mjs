// measureHttp: the OpenAI-compatible HTTP front, req/s and latency against the HTTP floor and mock-llm, then its start-up.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cfg, log } from "../lib/bench-config.mjs";
import { mockLlm, modelstubBuilt, notes, results } from "../lib/bench-setup.mjs";
import { httpPost } from "../lib/http-post.mjs";
import { HTTP_TEXT, httpReplyConstant, httpRequestBody, normalizeReplyId, writeHttpPayloads } from "../lib/http-payloads.mjs";
import { CHAT_COMPLETIONS_PATH, HTTP_LOADGEN } from "../lib/paths.mjs";
import { runNodeLoadgen } from "../lib/proc.mjs";
import { writeScript } from "../lib/scripts.mjs";
import { startHttpFloor, startMockLlm, startModelstubHttp } from "../lib/start-servers.mjs";
import { median, ratio, round } from "../lib/stats.mjs";
import { measureHttpStartup } from "./measure-http-startup.mjs";

/** One HTTP load run with the Node HTTP load generator: { rps, p50, p99, mean, calls, ok, ... }. */
async function httpLoad(address, requestFile, concurrency, { count, durationMs, warmup }) {
  const j = await runNodeLoadgen(
    HTTP_LOADGEN,
    {
      target: address,
      path: CHAT_COMPLETIONS_PATH,
      "body-file": requestFile,
      concurrency,
      count: durationMs ? 5_000_000 : count,
      "duration-ms": durationMs ?? 60_000,
      warmup: warmup ?? 0,
      "timeout-ms": 10_000,
      expect: `"content":${JSON.stringify(HTTP_TEXT)}`,
    },
    (durationMs ?? 60_000) + 90_000,
  );
  return {
    rps: j.rps,
    calls: j.calls,
    ok: j.ok,
    mismatched: j.mismatched,
    codes: j.codes,
    mean: j.latencyMs.mean,
    p50: j.latencyMs.p50,
    p99: j.latencyMs.p99,
    bytes: j.meanResponseBytes,
    sockets: j.socketsOpened,
  };
}

/**
 * The OpenAI-compatible HTTP front: POST /v1/chat/completions req/s and latency at each
 * concurrency, the HTTP floor, modelstub and mock-llm interleaved as in the unary section; then
 * spawn to first 200 for each, interleaved.
 */
export async function measureHttp() {
  const out = {
    loadgen: results.meta.httpLoadgen,
    request: { path: CHAT_COMPLETIONS_PATH, bytes: Buffer.byteLength(httpRequestBody()), text: HTTP_TEXT },
    byConcurrency: {},
    startup: null,
  };
  // mock-llm's cwd: an empty directory, so it runs its default configuration. Removed at the
  // end, or at exit if the run is cut short.
  const mockDir = mockLlm ? fs.mkdtempSync(path.join(os.tmpdir(), "modelstub-bench-mock-llm-")) : null;
  const removeMockDir = () => mockDir && fs.rmSync(mockDir, { recursive: true, force: true });
  process.once("exit", removeMockDir);
  try {
    const files = await httpLoadRuns(out, mockDir);
    out.startup = await measureHttpStartup(files.replyFile, mockDir);
  } finally {
    removeMockDir();
    process.off("exit", removeMockDir);
  }
  return out;
}

/** The load part of measureHttp: fills out.byConcurrency; returns the payload files. */
async function httpLoadRuns(out, mockDir) {
  const hc = cfg.http;
  const targets = [];
  const started = [];
  const runs = {};
  let files;
  try {
    // The floor answers modelstub's own reply to the bench request (asked once), with the id's
    // call sequence set to 1000 as in the gRPC floor; the built constant when modelstub is absent.
    let reply = httpReplyConstant();
    out.floorReply = "built constant (lib/http-payloads.mjs; modelstub not built)";
    let ms = null;
    if (modelstubBuilt) {
      ms = await startModelstubHttp(writeScript("http"));
      started.push(ms);
      const r = await httpPost(ms.address, CHAT_COMPLETIONS_PATH, httpRequestBody());
      if (r.status !== 200 || !r.body.includes(JSON.stringify(HTTP_TEXT))) {
        throw new Error(`modelstub's HTTP reply to the bench request is not the scripted one: ${r.status} ${r.body.slice(0, 300)}`);
      }
      reply = normalizeReplyId(r.body);
      out.floorReply = "modelstub's reply to the bench request, id sequence set to 1000";
      if (reply !== httpReplyConstant()) out.floorReplyDiffersFromBuiltConstant = true;
    }
    files = writeHttpPayloads(reply);
    out.floorReplyBytes = Buffer.byteLength(reply);
    const floor = await startHttpFloor(files.replyFile);
    started.push(floor);
    targets.push({ name: "floor", server: floor });
    if (ms) targets.push({ name: "modelstub", server: ms });
    if (mockLlm) {
      try {
        const peer = await startMockLlm(mockDir);
        started.push(peer);
        targets.push({ name: "mock-llm", server: peer });
      } catch (e) {
        notes.push(`mock-llm did not start: ${e.message}`);
      }
    }
    for (let r = 0; r < cfg.rounds; r++) {
      for (const c of hc.concurrency) {
        // Alternate the order each round, so drift in machine load hits every target alike.
        const order = r % 2 ? [...targets].reverse() : targets;
        for (const t of order) {
          log(`http round ${r + 1}/${cfg.rounds} c=${c} ${t.name}`);
          const res = await httpLoad(t.server.address, files.requestFile, c, hc);
          if (!res.ok) throw new Error(`${t.name}: no 2xx answers: ${JSON.stringify(res.codes)}`);
          ((runs[t.name] ??= {})[c] ??= []).push(res);
        }
      }
    }
  } finally {
    for (const s of started) await s.stop();
  }
  for (const c of hc.concurrency) {
    const row = {};
    for (const [name, byC] of Object.entries(runs)) {
      const rs = byC[c];
      row[name] = {
        rps: median(rs.map((x) => x.rps)),
        p50Ms: median(rs.map((x) => x.p50)),
        p99Ms: median(rs.map((x) => x.p99)),
        meanMs: median(rs.map((x) => x.mean)),
        calls: rs.reduce((a, x) => a + x.calls, 0),
        non2xx: rs.reduce((a, x) => a + (x.calls - x.ok), 0),
        mismatched: rs.reduce((a, x) => a + x.mismatched, 0),
        codes: rs.reduce((a, x) => {
          for (const [k, v] of Object.entries(x.codes)) a[k] = (a[k] ?? 0) + v;
          return a;
        }, {}),
        responseBytes: median(rs.map((x) => x.bytes)),
        socketsOpened: rs.map((x) => x.sockets.warmup + x.sockets.measured),
        rounds: rs.map((x) => round(x.rps, 0)),
      };
    }
    for (const name of ["modelstub", "mock-llm"]) {
      if (!row[name]) continue;
      row[name].throughputRatio = ratio(row[name].rps, row.floor.rps);
      row[name].p50Ratio = ratio(row[name].p50Ms, row.floor.p50Ms);
      row[name].p99Ratio = ratio(row[name].p99Ms, row.floor.p99Ms);
    }
    if (row.modelstub && row["mock-llm"]) row["mock-llm"].modelstubThroughputRatio = ratio(row.modelstub.rps, row["mock-llm"].rps);
    for (const [name, x] of Object.entries(row)) {
      if (x.non2xx) notes.push(`http c=${c} ${name}: ${x.non2xx} answers not 2xx: ${JSON.stringify(x.codes)}`);
      if (x.mismatched) notes.push(`http c=${c} ${name}: ${x.mismatched} 2xx answers without the expected content`);
    }
    out.byConcurrency[c] = row;
  }
  return files;
}
