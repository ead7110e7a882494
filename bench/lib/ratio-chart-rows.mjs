// ratioChartRows: the rows of the ratio chart (docs/performance-ratios.svg), from a results JSON.
//
// Every value is "speed relative to the floor": the floor's figure over modelstub's for times,
// memory and errors, modelstub's over the floor's for throughput, so > 1 is better than the floor
// either way. Targets come from results.meta.targets (the ones the run was judged by: issue 21's
// ratios, or an older run's absolute ones), converted to the same scale; absolute targets are
// converted with the floor's figure from the same run, HTTP start-up's (no slower than gRPC
// start-up) with modelstub's gRPC start-up. Peers (and the empty Node listener) are bars on the
// same scale: against the same floor. Targets against a peer (x GripMock, x mock-llm) and the
// in-process us/call (no floor) are in the table only. Pure: reads only its argument.

const num = (x) => typeof x === "number" && Number.isFinite(x);
/** Higher-is-better ratio: a throughput over the floor's. */
const faster = (value, floor) => (num(value) && num(floor) && floor > 0 ? value / floor : null);
/** Lower-is-better figure (time, memory, error) turned into "relative speed": floor over value. */
const shorter = (value, floor) => (num(value) && num(floor) && value > 0 ? floor / value : null);
/** A lower-is-better ratio target (<= x floor) on the chart's scale, else the legacy absolute one converted. */
const within = (ratioTarget, legacy) => (num(ratioTarget) ? 1 / ratioTarget : legacy);
const byC = (o) => Object.keys(o ?? {}).sort((a, b) => Number(a) - Number(b));

/**
 * @returns {{groups: {title: string, rows: {id: string, label: string, value: number|null,
 *   target: number|null, targetNote: string|null, peers: {name: string, value: number}[]}[]}[]}}
 */
export function ratioChartRows(results) {
  const t = results?.meta?.targets ?? {};
  const peers = Array.isArray(results?.peers) ? results.peers : [];
  const gripmock = peers.find((p) => p.name === "GripMock");
  const mockLlm = peers.find((p) => p.name === "mock-llm");
  const peerBar = (peer, value) => (peer && num(value) ? [{ name: `${peer.name} ${peer.version ?? ""}`.trim(), value }] : []);
  const row = (id, label, value, target = null, targetNote = null, peerBars = []) => ({
    id,
    label,
    value,
    target: num(target) ? target : null,
    targetNote: num(target) ? targetNote : null,
    peers: peerBars,
  });

  const grpc = [];
  const unary = results?.unary?.byConcurrency;
  for (const c of byC(unary)) {
    const r = unary[c];
    if (!r?.floor) continue;
    const g = gripmock?.unary?.[c];
    grpc.push(
      row(
        `unary-rps-c${c}`,
        `Unary req/s, c=${c}`,
        faster(r.modelstub?.rps, r.floor.rps),
        t.unaryThroughput,
        `>= ${t.unaryThroughput}x`,
        peerBar(gripmock, faster(g?.rps, r.floor.rps)),
      ),
    );
  }
  for (const c of byC(unary)) {
    const r = unary[c];
    if (!r?.floor || !num(r.floor.p99Ms)) continue;
    grpc.push(
      row(
        `unary-p99-c${c}`,
        `Unary p99 latency, c=${c}`,
        shorter(r.modelstub?.p99Ms, r.floor.p99Ms),
        num(t.unaryP99) ? 1 / t.unaryP99 : null,
        `p99 <= ${t.unaryP99}x`,
      ),
    );
  }
  const s = results?.stream;
  if (s?.floor)
    grpc.push(
      row(
        "stream",
        `Stream chunks/s (${s.chunksPerStream ?? "n"}-chunk reply)`,
        faster(s.modelstub?.framesPerSec, s.floor.framesPerSec),
        t.streaming,
        `>= ${t.streaming}x`,
      ),
    );
  const st = results?.startup;
  if (st?.floor) {
    const note = num(t.startupRatio) ? `<= ${t.startupRatio}x floor` : `< ${t.startupMs} ms`;
    const startupRow = (id, label, s) => {
      const target = within(t.startupRatio, num(t.startupMs) && s?.floor ? s.floor.medianMs / t.startupMs : null);
      const listener = num(s?.listener?.medianMs) ? [{ name: "empty Node listener", value: shorter(s.listener.medianMs, s.floor.medianMs) }] : [];
      const gm = id === "startup" ? peerBar(gripmock, shorter(gripmock?.startup?.medianMs, s.floor.medianMs)) : [];
      return row(id, label, s?.floor ? shorter(s.modelstub?.medianMs, s.floor.medianMs) : null, target, note, [...listener, ...gm]);
    };
    grpc.push(startupRow("startup", `Start-up, spawn to ready (median)${st.node ? `, Node ${st.node}` : ""}`, st));
    if (st.node24)
      grpc.push(startupRow("startup-node24", `Start-up, spawn to ready, Node ${st.node24.node ?? "24"}`, st.node24.notMeasured ? null : st.node24));
  }
  const v = results?.virtual;
  if (v?.floor) {
    const limit = num(t.virtualWallMs) && num(v.entries) ? (t.virtualWallMs * v.entries) / 10_000 : null;
    const target = within(t.virtualRatio, limit ? v.floor.wallMs / limit : null);
    grpc.push(
      row(
        "virtual",
        `Virtual clock: ${v.entries} x 1 s entries, wall time`,
        shorter(v.modelstub?.wallMs, v.floor.wallMs),
        target,
        num(t.virtualRatio) ? `<= ${t.virtualRatio}x floor` : `< ${limit} ms`,
      ),
    );
  }
  const sc = results?.scale;
  if (sc?.floor) {
    const target = within(t.scalePeakRssRatio, num(t.scalePeakRssMb) ? sc.floor.peakRssMb / t.scalePeakRssMb : null);
    grpc.push(
      row(
        "scale-rss",
        `Memory: peak RSS, ${sc.calls} hung calls`,
        shorter(sc.modelstub?.peakRssMb, sc.floor.peakRssMb),
        target,
        num(t.scalePeakRssRatio) ? `<= ${t.scalePeakRssRatio}x floor` : `< ${t.scalePeakRssMb} MB`,
      ),
    );
  }
  const tm = results?.timing;
  if (tm?.floor?.errorMs) {
    const floorErr = tm.floor.errorMs.p99;
    const target = num(t.timingErrorP99Ms) && num(floorErr) ? floorErr / (floorErr + t.timingErrorP99Ms) : null;
    grpc.push(
      row(
        "timing-p99",
        `Timer error p99, ${tm.calls} x ${tm.declaredMs} ms burst`,
        shorter(tm.modelstub?.errorMs?.p99, floorErr),
        target,
        `<= ${t.timingErrorP99Ms} ms over floor`,
      ),
    );
  }

  const http = [];
  const h = results?.http?.byConcurrency;
  const judgedAt = (c) => Array.isArray(t.ratioConcurrency) && t.ratioConcurrency.includes(Number(c));
  for (const c of byC(h)) {
    const r = h[c];
    if (!r?.floor) continue;
    const target = judgedAt(c) && num(t.httpThroughput) ? t.httpThroughput : null;
    http.push(
      row(
        `http-rps-c${c}`,
        `HTTP req/s, c=${c}`,
        faster(r.modelstub?.rps, r.floor.rps),
        target,
        `>= ${t.httpThroughput}x`,
        peerBar(mockLlm, faster(mockLlm?.http?.[c]?.rps, r.floor.rps)),
      ),
    );
  }
  const hs = results?.http?.startup;
  if (hs?.floor) {
    // No slower than modelstub's gRPC start-up of the same run: on this scale, HTTP floor / gRPC start-up.
    const grpcMs = results?.startup?.modelstub?.medianMs;
    const target = num(t.httpStartupVsGrpc) && num(grpcMs) ? hs.floor.medianMs / (grpcMs * t.httpStartupVsGrpc) : null;
    http.push(
      row(
        "http-startup",
        "HTTP start-up, spawn to first 200",
        shorter(hs.modelstub?.medianMs, hs.floor.medianMs),
        target,
        "<= gRPC start-up",
        peerBar(mockLlm, shorter(mockLlm?.startup?.medianMs, hs.floor.medianMs)),
      ),
    );
  }

  const groups = [];
  if (grpc.length) groups.push({ title: "gRPC: modelstub against the floor (bare grpc-js, pre-encoded constant reply)", rows: grpc });
  if (http.length) groups.push({ title: "HTTP: modelstub against the HTTP floor (bare node:http, constant body)", rows: http });
  return { groups };
}
