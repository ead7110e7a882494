import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module of the bench, no types.
import { ratioChartSvg } from "../../bench/lib/write-ratio-chart.mjs";

/*
 * docs/performance.md shows the bench's table and its ratio chart (docs/performance-ratios.svg).
 * Both come from bench/results/latest.json: the table's "Latest run" line names that run, and
 * the committed SVG must be what ratioChartSvg draws from it, so a chart never outlives its
 * numbers. Redraw: node bench/run.mjs --chart-from bench/results/latest.json
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const page = read("docs/performance.md");
const svg = read("docs/performance-ratios.svg");
const results = JSON.parse(read("bench/results/latest.json"));
const draw = (r: unknown): string => ratioChartSvg(r);

/** The ids of the chart's rows, in order. */
const rowIds = (s: string) => [...s.matchAll(/<g id="row-([a-z0-9-]+)">/g)].map((m) => m[1]);

/** What the chart must have a row for: every measurement of these results that has a baseline. */
// biome-ignore lint/suspicious/noExplicitAny: a bench results file, read as the JSON it is
function expectedRows(r: any): string[] {
  const cs = (o: object | undefined) => Object.keys(o ?? {}).sort((a, b) => Number(a) - Number(b));
  const unary = cs(r.unary?.byConcurrency);
  return [
    ...unary.map((c) => `unary-rps-c${c}`),
    ...unary.map((c) => `unary-p99-c${c}`),
    ...(r.stream?.floor ? ["stream"] : []),
    ...(r.startup?.floor ? ["startup"] : []),
    ...(r.startup?.floor && r.startup?.node24 ? ["startup-node24"] : []),
    ...(r.virtual?.floor ? ["virtual"] : []),
    ...(r.scale?.floor ? ["scale-rss"] : []),
    ...(r.timing?.floor ? ["timing-p99"] : []),
    ...cs(r.http?.byConcurrency).map((c) => `http-rps-c${c}`),
    ...(r.http?.startup?.floor ? ["http-startup"] : []),
  ];
}

describe("docs/performance-ratios.svg", () => {
  it("is shown on docs/performance.md, next to the table it was drawn with", () => {
    expect(page).toContain("](performance-ratios.svg)");
    const run = /<!-- section:bench -->\nLatest run: [^\n]*/.exec(page)?.[0] ?? "";
    expect(run, "the table comes from bench/results/latest.json").toContain(
      `; ${results.meta.date.slice(0, 10)}; load average at start ${results.meta.loadavgAtStart.join(" ")}.`,
    );
  });

  it("is what ratioChartSvg draws from bench/results/latest.json (node bench/run.mjs --chart-from bench/results/latest.json)", () => {
    expect(svg).toBe(draw(results));
  });

  it("draws the same bytes every time", () => {
    expect(draw(results)).toBe(draw(JSON.parse(JSON.stringify(results))));
  });

  it("is a standalone SVG document with a white background and no scripts", () => {
    expect(svg.startsWith("<svg ")).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg.match(/<svg\b/g)).toHaveLength(1);
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toContain('font-family="sans-serif"');
    expect(svg).toMatch(/<rect x="0" y="0" width="\d+" height="[\d.]+" fill="#ffffff"\/>/);
    expect(svg).not.toMatch(/<script|href=|@import|url\(/i);
    // Every element is closed: opening tags (not self-closed) balance the closing ones.
    for (const tag of ["g", "text", "tspan", "title"]) {
      expect(svg.match(new RegExp(`<${tag}[ >]`, "g"))?.length ?? 0, tag).toBe(svg.match(new RegExp(`</${tag}>`, "g"))?.length ?? 0);
    }
  });

  it("has a row for each measurement of the results that has a baseline, and a bar for each peer", () => {
    expect(rowIds(svg)).toEqual(expectedRows(results));
    for (const peer of results.peers) expect(svg).toContain(`${peer.name} ${peer.version} `);
    expect(svg).toContain("1.0 = the floor; higher is better");
  });
});

describe("ratioChartSvg on a small fixture", () => {
  const fixture = {
    meta: { mode: "quick", date: "2026-01-02T03:04:05.000Z", targets: { unaryThroughput: 0.9, unaryP99: 1.2, startupMs: 400 } },
    unary: { byConcurrency: { "16": { floor: { rps: 1000, p99Ms: 2 }, modelstub: { rps: 500, p99Ms: 4 } }, "1": { floor: { rps: 100, p99Ms: 1 } } } },
    startup: { floor: { medianMs: 200 }, modelstub: { medianMs: 100 } },
    http: { byConcurrency: { "1": { floor: { rps: 200 }, modelstub: { rps: 100 } } } },
    peers: [{ name: "mock-llm", version: "9.9.9", http: { "1": { rps: 50 } }, startup: null }],
  };
  const out = draw(fixture);

  it("has the rows of the measurements present, in a fixed order, and no others", () => {
    expect(rowIds(out)).toEqual(["unary-rps-c1", "unary-rps-c16", "unary-p99-c1", "unary-p99-c16", "startup", "http-rps-c1"]);
    expect(out).toBe(draw(structuredClone(fixture)));
  });

  it("puts throughput and times on one scale, higher is better: req/s over the floor's, the floor's time over modelstub's", () => {
    const row = (id: string) => new RegExp(`<g id="row-${id}">([\\s\\S]*?)</g>`).exec(out)?.[1] ?? "";
    expect(row("unary-rps-c16")).toContain(">0.50x<");
    expect(row("unary-p99-c16")).toContain(">0.50x<");
    expect(row("startup")).toContain(">2.00x<");
    expect(row("startup")).toContain("pass");
    expect(row("unary-rps-c16")).toContain("miss");
    expect(row("unary-rps-c1")).toContain("not measured");
    expect(row("http-rps-c1")).toContain("mock-llm 9.9.9 0.25x");
  });

  it("draws an empty chart, still a whole SVG, for results with no measurement", () => {
    const empty = draw({ meta: {}, peers: [] });
    expect(rowIds(empty)).toEqual([]);
    expect(empty.startsWith("<svg ") && empty.trimEnd().endsWith("</svg>")).toBe(true);
  });
});
