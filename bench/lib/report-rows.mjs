// reportRows: the verdicts against TARGETS (issue 21) and the rows of the markdown table, from the results.
// A target whose figures were not all measured in this run gets the verdict "not measured" (pass: null):
// neither passed nor missed. Peer and HTTP rows: report-peer-rows.mjs.
import { cfg, TARGETS } from "./bench-config.mjs";
import { results } from "./bench-setup.mjs";
import { STREAM_CHUNKS } from "./payloads.mjs";
import { echoRows } from "./report-echo-rows.mjs";
import { httpRows, peerRows } from "./report-peer-rows.mjs";
import { round } from "./stats.mjs";

const VERDICT = { true: "pass", false: "MISS", null: "not measured" };

export function reportRows() {
  const verdicts = [];
  const f = (x, d = 2) => (x == null ? "-" : typeof x === "number" ? String(round(x, d)) : String(x));
  const rows = [];
  const row = (metric, modelstub, floor, ratioText, target, pass) => rows.push([metric, modelstub, floor, ratioText, target, VERDICT[pass] ?? "-"]);
  /** A verdict on `value` (null: not measured); returns true, false or null for the row. */
  const judge = (name, value, ok) => {
    const pass = value == null ? null : Boolean(ok(value));
    verdicts.push({ name, value: value ?? null, pass });
    return pass;
  };
  const x = (r) => (r == null ? "-" : `${f(r)}x`);
  const pending = "pending";
  const ctx = { row, judge, f, x, pending };
  const T = TARGETS;

  if (results.unary?.byConcurrency) {
    for (const [c, r] of Object.entries(results.unary.byConcurrency)) {
      const m = r.modelstub;
      const tp = judge(`unary c=${c} throughput`, m?.throughputRatio, (v) => v >= T.unaryThroughput);
      const p99 = judge(`unary c=${c} p99`, m?.p99Ratio, (v) => v <= T.unaryP99);
      row(`Unary c=${c} req/s`, m ? f(m.rps, 0) : pending, f(r.floor.rps, 0), x(m?.throughputRatio), `>= ${T.unaryThroughput}x`, tp);
      row(`Unary c=${c} p50 ms`, m ? f(m.p50Ms, 3) : pending, f(r.floor.p50Ms, 3), x(m?.p50Ratio), "", undefined);
      row(`Unary c=${c} p99 ms`, m ? f(m.p99Ms, 3) : pending, f(r.floor.p99Ms, 3), x(m?.p99Ratio), `<= ${T.unaryP99}x`, p99);
    }
  }
  if (results.stream?.floor) {
    const m = results.stream.modelstub;
    const pass = judge("streaming", m?.ratio, (v) => v >= T.streaming);
    row(
      `Stream chunks/s (${STREAM_CHUNKS}-chunk reply)`,
      m ? f(m.framesPerSec, 0) : pending,
      f(results.stream.floor.framesPerSec, 0),
      x(m?.ratio),
      `>= ${T.streaming}x`,
      pass,
    );
  }
  if (results.inprocess && !results.inprocess.error) {
    const ip = results.inprocess;
    const us = ip.modelstub?.usPerCall;
    const pass = judge("in-process port us/call", us, (v) => v <= T.inprocessUsPerCall);
    row(
      `In-process port, literal reply, us/call (${ip.calls} sequential calls after ${ip.warmup} warm-up, median of ${cfg.rounds})`,
      us == null ? "not measured" : f(us, 2),
      "- (no floor)",
      "-",
      `<= ${T.inprocessUsPerCall} us`,
      pass,
    );
  }
  if (results.startup?.floor) startupRows(ctx);
  if (results.virtual?.floor) {
    const v = results.virtual;
    const m = v.modelstub;
    const pass = judge("virtual time over gRPC (x floor)", m?.ratio, (r) => r <= T.virtualRatio);
    row(
      `Virtual: ${v.entries} x 1 s entries over gRPC (c=${v.concurrency}), wall ms`,
      m ? f(m.wallMs, 0) : pending,
      `${f(v.floor.wallMs, 0)} (same calls)`,
      x(m?.ratio),
      `<= ${T.virtualRatio}x`,
      pass,
    );
    if (v.inProcess) {
      const limit = (T.virtualInProcessWallMs * v.entries) / 10_000;
      const ip = judge("virtual time in process", v.inProcess.wallMs, (w) => w < limit);
      row(
        `Virtual: same, in-process port, sequential, wall ms (script load ${f(v.inProcess.loadMs, 0)} ms)`,
        f(v.inProcess.wallMs, 0),
        "-",
        "-",
        `< ${limit} ms`,
        ip,
      );
    }
  }
  if (results.scale?.floor) {
    const s = results.scale;
    const m = s.modelstub;
    const pass = judge("scale peak RSS (x floor)", m?.peakRssRatio, (r) => r <= T.scalePeakRssRatio);
    const handles = m ? judge("scale handles back to baseline", m.handlesBackToBaseline, (b) => b) : undefined;
    row(
      `Scale: ${s.calls} hung calls (client had ${m?.maxInFlight ?? s.floor.maxInFlight} open at once), peak RSS MB`,
      m ? f(m.peakRssMb, 1) : pending,
      f(s.floor.peakRssMb, 1),
      x(m?.peakRssRatio),
      `<= ${T.scalePeakRssRatio}x`,
      pass,
    );
    row(`Scale: RSS MB after cut-off`, m ? f(m.rssAfterMb, 1) : pending, f(s.floor.rssAfterMb, 1), "-", "", undefined);
    row(
      `Scale: handles before -> after`,
      m ? `${m.handlesBefore} -> ${m.handlesAfter}` : pending,
      `${s.floor.handlesBefore} -> ${s.floor.handlesAfter}`,
      "-",
      "back to baseline",
      handles,
    );
  }
  if (results.timing?.floor) {
    const t = results.timing;
    const m = t.modelstub;
    // The verdict is on the error modelstub adds over the floor's bare timer: a burst of 1,000
    // calls costs the client and transport more than that on any machine, and the floor pays it too.
    const pass = judge("timing accuracy (p99 error over floor)", m?.excessErrorMs?.p99, (v) => v <= T.timingErrorP99Ms);
    row(
      `Timing: ${t.calls} x ${t.declaredMs} ms, error p50 ms`,
      m ? f(m.errorMs.p50, 2) : pending,
      f(t.floor.errorMs.p50, 2),
      m ? `${m.excessErrorMs.p50 >= 0 ? "+" : ""}${f(m.excessErrorMs.p50, 2)} ms` : "-",
      "",
      undefined,
    );
    row(
      `Timing: ${t.calls} x ${t.declaredMs} ms, error p99 ms`,
      m ? f(m.errorMs.p99, 2) : pending,
      f(t.floor.errorMs.p99, 2),
      m ? `${m.excessErrorMs.p99 >= 0 ? "+" : ""}${f(m.excessErrorMs.p99, 2)} ms` : "-",
      `<= ${T.timingErrorP99Ms} ms over floor`,
      pass,
    );
  }
  httpRows(ctx);
  echoRows(ctx);
  if (results.import?.modelstub) importRows(ctx);
  peerRows(ctx);
  results.verdicts = verdicts;
  return { verdicts, rows };
}

/** Start-up on this Node and on Node 24: modelstub against the grpc-js floor, and against an empty Node listener. */
function startupRows({ row, judge, f, x, pending }) {
  const st = results.startup;
  const T = TARGETS;
  const one = (label, s) => {
    if (!s?.floor) {
      judge(`start-up on ${label} (x floor)`, null);
      row(`Start-up on ${label}, spawn to SERVING, median ms`, "not measured", "-", "-", `<= ${T.startupRatio}x`, null);
      return;
    }
    const m = s.modelstub;
    const pass = judge(`start-up on ${label} (x floor)`, m?.ratio, (r) => r <= T.startupRatio);
    row(
      `Start-up on ${label}, spawn to SERVING, median ms (n=${s.floor.runs.length})`,
      m ? f(m.medianMs, 1) : pending,
      f(s.floor.medianMs, 1),
      x(m?.ratio),
      `<= ${T.startupRatio}x`,
      pass,
    );
    if (s.listener)
      row(
        `Start-up on ${label}: against an empty Node listener (spawn to TCP accept)`,
        m ? f(m.medianMs, 1) : pending,
        `${f(s.listener.medianMs, 1)} (listener)`,
        m ? x(m.medianMs / s.listener.medianMs) : "-",
        "",
        undefined,
      );
  };
  one(`Node ${st.node ?? "(this)"}`, st);
  one(st.node24?.node ? `Node ${st.node24.node}` : "Node 24", st.node24?.notMeasured ? null : st.node24);
}

/** Import cost (issue 31): import("modelstub") of the packed package beside aimock's, and what each installs. */
function importRows({ row, judge, f, x }) {
  const { modelstub: m, aimock: a, runs } = results.import;
  const peer = a ? `${a.package}@${a.version}` : "aimock not measured";
  const pass = judge('import("modelstub") ms', m.medianMs, (v) => v <= TARGETS.importMs);
  row(
    `Import: import("modelstub"), packed package in a fresh project, fresh process, median ms (n=${runs}; beside: ${peer})`,
    f(m.medianMs, 1),
    a ? f(a.medianMs, 1) : "-",
    x(m.ratio),
    `<= ${TARGETS.importMs} ms`,
    pass,
  );
  row(
    `Import: installed node_modules MB (packages), npm install --omit=dev in an empty project`,
    `${f(m.mb, 1)} (${m.packages})`,
    a ? `${f(a.mb, 1)} (${a.packages})` : "-",
    a ? x(m.mb / a.mb) : "-",
    "",
    undefined,
  );
}
