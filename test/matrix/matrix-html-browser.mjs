#!/usr/bin/env node
/*
 * The matrix HTML report in a real browser: Debian's Chromium (scripts/install-chromium.sh),
 * driven by playwright-core. Renders test/matrix/fixtures/executors-report.json with the built
 * matrixHtml (dist/), opens the file, and checks that the grid renders with the verdict colours,
 * that clicking a cell draws that plan's timeline (a failed crash plan: the restart, its reasons,
 * its calls against the clean run; a retried plan: the retry), that the page makes no request
 * and logs no error. Saves a screenshot of the page with the failed plan open.
 *
 *   node test/matrix/matrix-html-browser.mjs [--screenshot FILE]   (default .cache/matrix-report.png)
 *
 * Prints ok/FAIL lines and "N passed, N failed"; exits 1 when a check fails.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { matrixHtml } from "../../dist/src/matrix/matrix-html.js";

const root = resolve(import.meta.dirname, "../..");
const args = process.argv.slice(2);
const shotAt = args.indexOf("--screenshot");
const screenshot = resolve(shotAt >= 0 ? args[shotAt + 1] : join(root, ".cache/matrix-report.png"));

const report = JSON.parse(readFileSync(join(root, "test/matrix/fixtures/executors-report.json"), "utf8"));
const scratch = mkdtempSync(join(tmpdir(), "modelstub-matrix-html-"));
const file = join(scratch, "report.html");
writeFileSync(file, matrixHtml(report));

let passed = 0;
let failed = 0;
const check = (label, good, detail = "") => {
  if (good) passed++;
  else failed++;
  console.log(`${good ? "ok  " : "FAIL"} ${label}${good || detail === "" ? "" : `: ${detail}`}`);
};

// The flags this machine needs (no network: background connections would be refused); Playwright
// adds --headless and a fresh profile directory of its own.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = [];
  const requests = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  page.on("request", (req) => req.url() !== pathToFileURL(file).href && requests.push(req.url()));
  await page.goto(pathToFileURL(file).href);

  const cells = page.locator("table.grid button.cell");
  check("the grid has a cell per plan", (await cells.count()) === report.plans.length, `${await cells.count()} cells for ${report.plans.length} plans`);
  const colour = (id) => page.locator(`table.grid button[data-plan="${id}"]`).evaluate((e) => getComputedStyle(e).backgroundColor);
  const passing = report.plans.find((p) => p.verdict === "pass");
  const failing = report.plans.find((p) => p.verdict === "fail" && p.kind === "crash");
  check("a passing cell is green", (await colour(passing.id)) === "rgb(218, 251, 225)", await colour(passing.id));
  check("a failing cell is red", (await colour(failing.id)) === "rgb(255, 235, 233)", await colour(failing.id));
  check("no plan is open before a click", await page.locator("#detail").isHidden());

  // A retried plan: its timeline shows the fault and the retry.
  const retried = report.plans.find((p) => p.id.startsWith("act.1.unavailable"));
  await page.locator(`table.grid button[data-plan="${retried.id}"]`).click();
  await page.locator("#timeline").waitFor();
  check("clicking a cell opens its plan", (await page.locator("#detail h2").textContent()).startsWith(retried.name));
  check("its timeline has a row per call", (await page.locator("#timeline .call").count()) === retried.calls.length);
  check("the retry is marked", (await page.locator("#timeline .tag", { hasText: "retry 1" }).count()) === 1);
  check("the fault is marked", (await page.locator("#timeline .fault").count()) === 1);

  // The failed crash plan: killed, restarted, its reasons and its calls against the clean run.
  await page.locator(`table.grid button[data-plan="${failing.id}"]`).click();
  await page.locator("#timeline .restart").waitFor();
  check("a failed crash plan shows the restart", (await page.locator("#timeline .restart").textContent()).includes("restart 1"));
  check("and a row per call", (await page.locator("#timeline .call").count()) === failing.calls.length);
  const widths = await page.locator("#timeline .bar").evaluateAll((bars) => bars.map((b) => b.getBoundingClientRect().width));
  check("bars are drawn by declared latency", widths.length === failing.calls.length && widths.some((w) => w > 50), JSON.stringify(widths));
  check("its reasons are shown", (await page.locator("#detail .reason").first().textContent()).includes("side-effect-twice"));
  check("its calls are compared with the clean run's", (await page.locator("#diff tr.differs").count()) > 0);
  check("the selected cell is outlined", (await page.locator("button.cell.selected").getAttribute("data-plan")) === failing.id);
  check("the URL names the plan", page.url().endsWith(`#plan=${encodeURIComponent(failing.id)}`));

  // Opened from a link to a plan: the page shows it at once.
  const linked = await browser.newPage();
  await linked.goto(`${pathToFileURL(file).href}#plan=${encodeURIComponent(report.clean.id)}`);
  check("a #plan= link opens that plan", (await linked.locator("#timeline .call").count()) === report.clean.calls.length);
  await linked.close();

  check("the page made no request", requests.length === 0, requests.join(", "));
  check("the page logged no error", errors.length === 0, errors.join("; "));
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot.replace(`${root}/`, "")}`);
} finally {
  await browser.close();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
