// ratioChartSvg: the bench's ratios as a horizontal bar chart in plain SVG (docs/performance-ratios.svg);
// writeRatioChart: writes it to a file.
//
// ratioChartSvg is pure and deterministic: the same results JSON gives the same bytes (no clock,
// fixed number formatting, rows in a fixed order). The rows and their scale: ratio-chart-rows.mjs.
// Plain SVG, inline attributes, no scripts or external fonts, a white background so it reads the
// same on GitHub's light and dark themes.
import fs from "node:fs";
import path from "node:path";
import { ratioChartRows } from "./ratio-chart-rows.mjs";

const WIDTH = 1010;
const LABEL_RIGHT = 300; // labels end here (text-anchor end)
const PLOT_X = 312; // the axis' 0
const PLOT_W = 440; // the axis, then room for the values past its end
const VERDICT_X = PLOT_X + PLOT_W + 50; // the verdict column
const ROW_H = 24;
const PEER_H = 12;
const COLOURS = {
  modelstub: "#2f6fb7",
  peer: "#e08a00",
  target: "#c62828",
  pass: "#2e7d32",
  grid: "#dddddd",
  floor: "#333333",
  text: "#1a1a1a",
  muted: "#555555",
};

/** Fixed formatting: coordinates with at most one decimal, ratios with two. */
const c = (x) => String(Math.round(x * 10) / 10);
const fmt = (x) => `${x.toFixed(2)}x`;
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const text = (x, y, body, attrs = "") => `<text x="${c(x)}" y="${c(y)}"${attrs ? ` ${attrs}` : ""}>${body}</text>`;
const rect = (x, y, w, h, fill) => `<rect x="${c(x)}" y="${c(y)}" width="${c(w)}" height="${c(h)}" fill="${fill}"/>`;
const line = (x1, y1, x2, y2, stroke, width = 1, extra = "") =>
  `<line x1="${c(x1)}" y1="${c(y1)}" x2="${c(x2)}" y2="${c(y2)}" stroke="${stroke}" stroke-width="${width}"${extra ? ` ${extra}` : ""}/>`;

/** The axis: its end and its tick step, chosen from the largest value or target (at least 1.0). */
function axis(groups) {
  const all = groups.flatMap((g) => g.rows.flatMap((r) => [r.value, r.target, ...r.peers.map((p) => p.value)])).filter((x) => typeof x === "number");
  const top = Math.max(1, ...all) * 1.05;
  const step = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100].find((s) => top / s <= 8) ?? Math.ceil(top / 8);
  const max = Math.ceil(top / step) * step;
  return { max, step, ticks: Array.from({ length: Math.round(max / step) + 1 }, (_, i) => i * step) };
}

/** One row: label, modelstub's bar, the peers' bars, the target marker, the values. */
function rowSvg(r, y, xOf) {
  const out = [`<g id="row-${esc(r.id)}">`, text(LABEL_RIGHT, y + 15, esc(r.label), `text-anchor="end" fill="${COLOURS.text}"`)];
  if (r.value == null) out.push(text(PLOT_X + 6, y + 15, "not measured", `fill="${COLOURS.muted}" font-style="italic"`));
  else {
    const end = xOf(r.value);
    out.push(rect(PLOT_X, y + 5, Math.max(1, end - PLOT_X), 14, COLOURS.modelstub));
    // The value just past the bar, or past the target marker when the marker sits under it.
    const tx = r.target == null ? null : xOf(r.target);
    const at = tx != null && tx > end && tx < end + 46 ? tx : end;
    out.push(text(at + 6, y + 16, fmt(r.value), `font-weight="bold" fill="${COLOURS.text}"`));
    if (r.target != null) {
      const [word, colour] = r.value >= r.target ? ["pass", COLOURS.pass] : ["miss", COLOURS.target];
      out.push(
        text(
          VERDICT_X,
          y + 16,
          `<tspan font-weight="bold" fill="${colour}">${word}</tspan><tspan dx="8" fill="${COLOURS.muted}">target ${esc(r.targetNote)}</tspan>`,
        ),
      );
    }
  }
  r.peers.forEach((p, i) => {
    const py = y + ROW_H + i * PEER_H;
    const end = xOf(p.value);
    out.push(rect(PLOT_X, py - 2, Math.max(1, end - PLOT_X), 9, COLOURS.peer));
    out.push(text(end + 6, py + 6, `${esc(p.name)} ${fmt(p.value)}`, `font-size="11" fill="${COLOURS.muted}"`));
  });
  if (r.target != null) {
    const x = xOf(r.target);
    out.push(line(x, y + 1, x, y + 23, COLOURS.target, 2.5));
  }
  out.push("</g>");
  return out;
}

/** The chart for one results JSON (what the bench writes to bench/results/*.json). */
export function ratioChartSvg(results) {
  const { groups } = ratioChartRows(results);
  const { max, ticks } = axis(groups);
  const xOf = (v) => PLOT_X + (Math.min(v, max) / max) * PLOT_W;
  const meta = results?.meta ?? {};
  const body = [];
  let y = 104;
  const plotTop = y;
  for (const g of groups) {
    body.push(text(16, y + 16, esc(g.title), `font-weight="bold" font-size="13" fill="${COLOURS.text}"`));
    y += 26;
    for (const r of g.rows) {
      body.push(...rowSvg(r, y, xOf));
      y += ROW_H + r.peers.length * PEER_H + (r.peers.length ? 4 : 0);
    }
    y += 8;
  }
  if (!groups.length) {
    body.push(text(PLOT_X, y + 16, "no measurement with a baseline in these results", `fill="${COLOURS.muted}"`));
    y += 30;
  }
  const plotBottom = y;
  const grid = ticks.map((t) => line(xOf(t), plotTop, xOf(t), plotBottom, COLOURS.grid));
  const tickLabels = ticks.map((t) =>
    text(xOf(t), plotBottom + 16, t === 0 ? "0" : `${Number(t.toFixed(2))}x`, `text-anchor="middle" font-size="11" fill="${COLOURS.muted}"`),
  );
  const floorX = xOf(1);
  const height = plotBottom + 76;
  const run = [meta.mode && `${meta.mode} run`, meta.date && `of ${String(meta.date).slice(0, 10)}`].filter(Boolean).join(" ");
  const machine = [
    meta.cpus && `${meta.cpus} x ${meta.cpuModel ?? "CPU"}`,
    meta.node && `Node ${meta.node}`,
    Array.isArray(meta.loadavgAtStart) && `load average at start ${meta.loadavgAtStart.join(" ")}`,
  ]
    .filter(Boolean)
    .join(", ");
  const legendY = 78;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${c(height)}" viewBox="0 0 ${WIDTH} ${c(height)}" font-family="sans-serif" font-size="12" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">modelstub's benchmark ratios: speed relative to the floor measured in the same run (1.0 = the floor; higher is better)</title>`,
    rect(0, 0, WIDTH, height, "#ffffff"),
    text(16, 28, "modelstub against its baselines: same-run ratios", `font-weight="bold" font-size="17" fill="${COLOURS.text}"`),
    text(16, 48, esc(`Speed relative to the floor (1.0 = the floor; higher is better). ${run}${machine ? `; ${machine}` : ""}.`), `fill="${COLOURS.muted}"`),
    rect(16, legendY - 10, 22, 12, COLOURS.modelstub),
    text(44, legendY, "modelstub", `fill="${COLOURS.text}"`),
    rect(130, legendY - 8, 22, 9, COLOURS.peer),
    text(158, legendY, "peer (or empty Node listener), against the same floor", `fill="${COLOURS.text}"`),
    line(470, legendY - 12, 470, legendY + 3, COLOURS.target, 2.5),
    text(478, legendY, "target, converted to this scale (absolute targets with this run's floor)", `fill="${COLOURS.text}"`),
    ...grid,
    ...body,
    line(floorX, plotTop - 6, floorX, plotBottom, COLOURS.floor, 1.5, `stroke-dasharray="5 3"`),
    text(floorX, plotTop - 10, "1.0 = the floor", `text-anchor="middle" font-size="11" fill="${COLOURS.floor}"`),
    text(VERDICT_X, plotTop - 10, "verdict, target", `font-size="11" fill="${COLOURS.muted}"`),
    line(PLOT_X, plotBottom, PLOT_X + PLOT_W, plotBottom, COLOURS.floor),
    ...tickLabels,
    text(
      PLOT_X + PLOT_W / 2,
      plotBottom + 36,
      "speed relative to the floor (1.0 = the floor; higher is better)",
      `text-anchor="middle" font-weight="bold" fill="${COLOURS.text}"`,
    ),
    text(
      PLOT_X + PLOT_W / 2,
      plotBottom + 54,
      `Throughput: modelstub / floor. Times, memory and timer error are inverted: floor / modelstub.`,
      `text-anchor="middle" font-size="11" fill="${COLOURS.muted}"`,
    ),
    "</svg>",
  ];
  return `${svg.join("\n")}\n`;
}

/** Writes the chart of `results` to `file` (directories made as needed). */
export function writeRatioChart(results, file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, ratioChartSvg(results));
  process.stderr.write(`bench: wrote the ratio chart to ${path.relative(process.cwd(), file) || file}\n`);
}
