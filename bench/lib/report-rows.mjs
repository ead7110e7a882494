// reportRows: the verdicts against TARGETS and the rows of the markdown table, from the results.
import { cfg, TARGETS } from "./bench-config.mjs";
import { results } from "./bench-setup.mjs";
import { STREAM_CHUNKS } from "./payloads.mjs";
import { ratio, round } from "./stats.mjs";

// ---------------------------------------------------------------------------------------------
// Verdicts and output.

export function reportRows() {
  const verdicts = [];
  const verdict = (name, value, pass) => verdicts.push({ name, value, pass });
  const f = (x, d = 2) => (x == null ? "-" : typeof x === "number" ? String(round(x, d)) : String(x));
  const rows = [];
  const row = (metric, modelstub, floor, ratioText, target, pass) => rows.push([metric, modelstub, floor, ratioText, target, pass === undefined ? "-" : pass ? "pass" : "MISS"]);
  const pending = "pending";

  if (results.unary?.byConcurrency) {
    for (const [c, r] of Object.entries(results.unary.byConcurrency)) {
      const m = r.modelstub;
      const tp = m ? m.throughputRatio >= TARGETS.unaryThroughput : undefined;
      const p99 = m ? m.p99Ratio <= TARGETS.unaryP99 : undefined;
      if (m) verdict(`unary c=${c} throughput`, m.throughputRatio, tp), verdict(`unary c=${c} p99`, m.p99Ratio, p99);
      row(`Unary c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), m ? f(m.throughputRatio) + "x" : "-", `>= ${TARGETS.unaryThroughput}x`, tp);
      row(`Unary c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), m ? f(m.p50Ratio) + "x" : "-", "", undefined);
      row(`Unary c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), m ? f(m.p99Ratio) + "x" : "-", `<= ${TARGETS.unaryP99}x`, p99);
    }
  }
  if (results.stream?.floor) {
    const m = results.stream.modelstub;
    const pass = m ? m.ratio >= TARGETS.streaming : undefined;
    if (m) verdict("streaming", m.ratio, pass);
    row(`Stream chunks/s (${STREAM_CHUNKS}-chunk reply)`, m ? f(m.framesPerSec, 0) : pending, f(results.stream.floor.framesPerSec, 0), m ? f(m.ratio) + "x" : "-", `>= ${TARGETS.streaming}x`, pass);
  }
  if (results.startup?.floor) {
    const m = results.startup.modelstub;
    const pass = m ? m.medianMs < TARGETS.startupMs : undefined;
    if (m) verdict("start-up", m.medianMs, pass);
    row(`Start-up median ms (n=${cfg.startup.runs})`, m ? f(m.medianMs, 1) : pending, f(results.startup.floor.medianMs, 1), m ? f(m.ratio) + "x" : "-", `< ${TARGETS.startupMs} ms`, pass);
  }
  if (results.virtual?.floor) {
    const v = results.virtual;
    const m = v.modelstub;
    const limit = (TARGETS.virtualWallMs * v.entries) / 10_000;
    const pass = m ? m.wallMs < limit : undefined;
    if (m) verdict("virtual time", m.wallMs, pass);
    row(`Virtual: ${v.entries} x 1 s entries over gRPC (c=${v.concurrency}), wall ms`, m ? f(m.wallMs, 0) : pending, f(v.floor.wallMs, 0) + " (same calls)", m ? f(m.ratio) + "x" : "-", `< ${limit} ms`, pass);
    if (v.inProcess) {
      const ip = v.inProcess.wallMs < limit;
      verdict("virtual time in process", v.inProcess.wallMs, ip);
      row(`Virtual: same, in-process port, sequential, wall ms (script load ${f(v.inProcess.loadMs, 0)} ms)`, f(v.inProcess.wallMs, 0), "-", "-", `< ${limit} ms`, ip);
    }
  }
  if (results.scale?.floor) {
    const s = results.scale;
    const m = s.modelstub;
    const limit = TARGETS.scalePeakRssMb;
    const pass = m ? m.peakRssMb < limit && m.handlesBackToBaseline : undefined;
    if (m) verdict("scale", m.peakRssMb, pass);
    row(`Scale: ${s.calls} hung calls (client had ${m?.maxInFlight ?? s.floor.maxInFlight} open at once), peak RSS MB`, m ? f(m.peakRssMb, 1) : pending, f(s.floor.peakRssMb, 1), m ? f(m.peakRssRatio) + "x" : "-", `< ${limit} MB`, m ? m.peakRssMb < limit : undefined);
    row(`Scale: RSS MB after cut-off`, m ? f(m.rssAfterMb, 1) : pending, f(s.floor.rssAfterMb, 1), "-", "", undefined);
    row(`Scale: handles before -> after`, m ? `${m.handlesBefore} -> ${m.handlesAfter}` : pending, `${s.floor.handlesBefore} -> ${s.floor.handlesAfter}`, "-", "back to baseline", m ? m.handlesBackToBaseline : undefined);
  }
  if (results.timing?.floor) {
    const t = results.timing;
    const m = t.modelstub;
    // The verdict is on the error modelstub adds over the floor's bare timer: a burst of 1,000
    // calls costs the client and transport more than 5 ms on any machine, and the floor pays it too.
    const pass = m ? m.excessErrorMs.p99 < TARGETS.timingErrorP99Ms : undefined;
    if (m) verdict("timing accuracy (p99 error over floor)", m.excessErrorMs.p99, pass);
    row(`Timing: ${t.calls} x ${t.declaredMs} ms, error p50 ms`, m ? f(m.errorMs.p50, 2) : pending, f(t.floor.errorMs.p50, 2), m ? `+${f(m.excessErrorMs.p50, 2)} ms` : "-", "", undefined);
    row(`Timing: ${t.calls} x ${t.declaredMs} ms, error p99 ms`, m ? f(m.errorMs.p99, 2) : pending, f(t.floor.errorMs.p99, 2), m ? `+${f(m.excessErrorMs.p99, 2)} ms` : "-", `< ${TARGETS.timingErrorP99Ms} ms over floor`, pass);
  }
  // HTTP: no targets in the issue, so no verdicts; ratios against the HTTP floor.
  if (results.http?.byConcurrency) {
    for (const [c, r] of Object.entries(results.http.byConcurrency)) {
      const m = r.modelstub;
      row(`HTTP c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), m ? f(m.throughputRatio) + "x" : "-", "", undefined);
      row(`HTTP c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), m ? f(m.p50Ratio) + "x" : "-", "", undefined);
      row(`HTTP c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), m ? f(m.p99Ratio) + "x" : "-", "", undefined);
    }
  }
  if (results.http?.startup?.floor) {
    const m = results.http.startup.modelstub;
    row(`HTTP start-up median ms (n=${cfg.http.startupRuns}, spawn to first 200)`, m ? f(m.medianMs, 1) : pending, f(results.http.startup.floor.medianMs, 1), m ? f(m.ratio) + "x" : "-", "", undefined);
  }
  for (const peer of results.peers) {
    if (peer.name === "GripMock") {
      for (const [c, g] of Object.entries(peer.unary)) {
        if (!g) continue;
        const ms = results.unary.byConcurrency[c].modelstub;
        row(`Peer GripMock ${peer.version} c=${c} req/s`, ms ? f(ms.rps, 0) : pending, f(g.rps, 0) + " (GripMock)", ms ? f(ratio(ms.rps, g.rps)) + "x" : "-", "", undefined);
      }
      if (peer.startup) {
        const ms = results.startup?.modelstub;
        row(`Peer GripMock start-up median ms`, ms ? f(ms.medianMs, 1) : pending, f(peer.startup.medianMs, 1) + " (GripMock)", ms ? f(ratio(ms.medianMs, peer.startup.medianMs)) + "x" : "-", "", undefined);
      }
    } else if (peer.name === "mock-llm") {
      for (const [c, p] of Object.entries(peer.http)) {
        const ms = results.http.byConcurrency[c].modelstub;
        row(`Peer mock-llm ${peer.version} c=${c} req/s (HTTP)`, ms ? f(ms.rps, 0) : pending, f(p.rps, 0) + " (mock-llm)", ms ? f(ratio(ms.rps, p.rps)) + "x" : "-", "", undefined);
      }
      if (peer.startup) {
        const ms = results.http?.startup?.modelstub;
        row(`Peer mock-llm ${peer.version} start-up median ms (HTTP)`, ms ? f(ms.medianMs, 1) : pending, f(peer.startup.medianMs, 1) + " (mock-llm)", ms ? f(ratio(ms.medianMs, peer.startup.medianMs)) + "x" : "-", "", undefined);
      }
    }
  }
  results.verdicts = verdicts;
  return { verdicts, rows };
}
