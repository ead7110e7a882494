// httpRows, peerRows: the HTTP front's rows (against the node:http floor, and HTTP start-up against gRPC
// start-up) and the peers' rows (GripMock, mock-llm), with issue 21's targets, for report-rows.mjs.
import { cfg, TARGETS } from "./bench-config.mjs";
import { results } from "./bench-setup.mjs";
import { STREAM_CHUNKS } from "./payloads.mjs";
import { ratio } from "./stats.mjs";

/** Whether concurrency `c` is one the floor and peer ratios are judged at. */
const judgedAt = (c) => TARGETS.ratioConcurrency.includes(Number(c));

export function httpRows({ row, judge, f, x, pending }) {
  const T = TARGETS;
  if (results.http?.byConcurrency) {
    for (const [c, r] of Object.entries(results.http.byConcurrency)) {
      const m = r.modelstub;
      const pass = judgedAt(c) ? judge(`http c=${c} throughput`, m?.throughputRatio, (v) => v >= T.httpThroughput) : undefined;
      row(`HTTP c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), x(m?.throughputRatio), judgedAt(c) ? `>= ${T.httpThroughput}x` : "", pass);
      row(`HTTP c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), x(m?.p50Ratio), "", undefined);
      row(`HTTP c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), x(m?.p99Ratio), "", undefined);
    }
  }
  const hs = results.http?.startup;
  if (hs?.floor) {
    const m = hs.modelstub;
    row(
      `HTTP start-up median ms (n=${cfg.http.startupRuns}, spawn to first 200)`,
      m ? f(m.medianMs, 1) : pending,
      f(hs.floor.medianMs, 1),
      x(m?.ratio),
      "",
      undefined,
    );
  }
  // HTTP start-up against gRPC start-up, both modelstub's medians of this run: needs both sections.
  if (hs || results.startup) {
    const h = hs?.modelstub?.medianMs;
    const g = results.startup?.modelstub?.medianMs;
    const r = h != null && g != null ? ratio(h, g) : null;
    const pass = judge("HTTP start-up over gRPC start-up", r, (v) => v <= T.httpStartupVsGrpc);
    row(
      `HTTP start-up (first 200) against gRPC start-up (SERVING), modelstub, median ms`,
      h == null ? "not measured" : f(h, 1),
      g == null ? "not measured" : `${f(g, 1)} (gRPC)`,
      x(r),
      `<= ${T.httpStartupVsGrpc}x`,
      pass,
    );
  }
}

/** One peer req/s row at concurrency c: modelstub's over the peer's, judged at TARGETS.ratioConcurrency. */
function peerRps({ row, judge, f, x, pending }, label, peerName, c, ms, peer, target) {
  const r = ms && peer ? ratio(ms.rps, peer.rps) : null;
  const pass = judgedAt(c) ? judge(`${label} c=${c} (x ${peerName})`, r, (v) => v >= target) : undefined;
  const mark = judgedAt(c) ? `>= ${target}x ${peerName}` : "";
  if (!peer) return row(`${label} c=${c} req/s`, ms ? f(ms.rps, 0) : pending, `not measured (${peerName})`, "-", mark, pass);
  row(`${label} c=${c} req/s`, ms ? f(ms.rps, 0) : pending, `${f(peer.rps, 0)} (${peerName})`, x(r), mark, pass);
}

export function peerRows(ctx) {
  const { row, f, x, pending } = ctx;
  const gripmock = results.peers.find((p) => p.name === "GripMock");
  const mockLlm = results.peers.find((p) => p.name === "mock-llm");
  // The peer targets are judged whenever the section ran: without the peer, "not measured".
  if (results.unary?.byConcurrency) {
    const label = gripmock ? `Peer GripMock ${gripmock.version}` : "Peer GripMock";
    for (const [c, u] of Object.entries(results.unary.byConcurrency)) {
      if (gripmock?.unary?.[c] || judgedAt(c)) peerRps(ctx, label, "GripMock", c, u.modelstub, gripmock?.unary?.[c], TARGETS.unaryVsGripmock);
    }
  }
  if (gripmock?.stream) {
    const ms = results.stream?.modelstub;
    row(
      `Peer GripMock stream chunks/s (${STREAM_CHUNKS}-chunk reply)`,
      ms ? f(ms.framesPerSec, 0) : pending,
      `${f(gripmock.stream.framesPerSec, 0)} (GripMock)`,
      ms ? x(ratio(ms.framesPerSec, gripmock.stream.framesPerSec)) : "-",
      "",
      undefined,
    );
  }
  if (gripmock?.startup) {
    const ms = results.startup?.modelstub;
    row(
      `Peer GripMock start-up median ms`,
      ms ? f(ms.medianMs, 1) : pending,
      `${f(gripmock.startup.medianMs, 1)} (GripMock)`,
      ms ? x(ratio(ms.medianMs, gripmock.startup.medianMs)) : "-",
      "",
      undefined,
    );
  }
  if (results.http?.byConcurrency) {
    const label = mockLlm ? `Peer mock-llm ${mockLlm.version} (HTTP)` : "Peer mock-llm (HTTP)";
    for (const [c, h] of Object.entries(results.http.byConcurrency)) {
      if (mockLlm?.http?.[c] || judgedAt(c)) peerRps(ctx, label, "mock-llm", c, h.modelstub, mockLlm?.http?.[c], TARGETS.httpVsMockLlm);
    }
  }
  if (mockLlm?.startup) {
    const ms = results.http?.startup?.modelstub;
    row(
      `Peer mock-llm ${mockLlm.version} start-up median ms (HTTP)`,
      ms ? f(ms.medianMs, 1) : pending,
      `${f(mockLlm.startup.medianMs, 1)} (mock-llm)`,
      ms ? x(ratio(ms.medianMs, mockLlm.startup.medianMs)) : "-",
      "",
      undefined,
    );
  }
}
