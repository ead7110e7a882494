/*
 * The inline CSS and script of the matrix HTML report (matrix-html.ts). The script is plain
 * browser JavaScript kept as text (the page must work opened from disk, with nothing to fetch):
 * it reads the report from <script id="matrix-data"> and draws a plan's timeline, its reasons
 * and its diff against the clean run when a plan is clicked, or named by #plan=ID in the URL.
 */

/** The report's stylesheet: verdict colours, the grid, the timeline's rows and bars. */
export const matrixHtmlStyle = `
:root { --pass: #1a7f37; --pass-bg: #dafbe1; --fail: #cf222e; --fail-bg: #ffebe9; --error: #9a6700; --error-bg: #fff8c5;
  --none: #8c959f; --line: #d0d7de; --ink: #1f2328; --muted: #59636e; font-family: system-ui, sans-serif; color: var(--ink); }
body { margin: 0 auto; max-width: 1100px; padding: 16px 24px 48px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; } h2 { font-size: 1.1rem; margin: 24px 0 8px; } h3 { font-size: 1rem; margin: 16px 0 6px; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.85rem; }
pre { background: #f6f8fa; border: 1px solid var(--line); padding: 8px; overflow-x: auto; white-space: pre-wrap; }
.summary, .command, .legend { margin: 4px 0; color: var(--muted); }
.v-pass { color: var(--pass); } .v-fail { color: var(--fail); } .v-error { color: var(--error); }
table.grid { border-collapse: collapse; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 0; text-align: center; }
table.grid th { padding: 4px 10px; font-weight: 600; background: #f6f8fa; }
table.grid th[scope=row] { text-align: left; font-family: ui-monospace, monospace; }
table.grid small { color: var(--muted); font-weight: 400; }
button.cell { width: 100%; min-width: 64px; height: 32px; border: 0; font-size: 1rem; cursor: pointer; }
button.cell.v-pass, .swatch.v-pass { background: var(--pass-bg); } button.cell.v-fail, .swatch.v-fail { background: var(--fail-bg); }
button.cell.v-error, .swatch.v-error { background: var(--error-bg); }
button.cell.selected, button.plan-link.selected { outline: 3px solid var(--ink); outline-offset: -3px; }
td.none, .swatch.none { color: var(--none); background: #fff; }
.swatch { display: inline-block; width: 22px; text-align: center; border: 1px solid var(--line); }
button.plan-link { border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; padding: 1px 6px; }
ul.others { list-style: none; padding: 0; } ul.others li { margin: 2px 0; }
#detail { border-top: 2px solid var(--line); margin-top: 24px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 0.85rem; font-weight: 600; }
.badge.v-pass { background: var(--pass-bg); } .badge.v-fail { background: var(--fail-bg); } .badge.v-error { background: var(--error-bg); }
.reason b { font-family: ui-monospace, monospace; }
.timeline { border: 1px solid var(--line); padding: 6px 8px; }
.call, .axis { display: grid; grid-template-columns: 260px 1fr 210px; align-items: center; gap: 8px; min-height: 26px; }
.axis { color: var(--muted); font-size: 0.75rem; min-height: 18px; }
.axis .ticks { position: relative; height: 14px; border-bottom: 1px solid var(--line); }
.axis .ticks span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
.axis .ticks span:first-child { transform: none; } .axis .ticks span:last-child { transform: translateX(-100%); }
.track { position: relative; height: 16px; background: repeating-linear-gradient(90deg, transparent 0 24.8%, #eaeef2 24.8% 25%); }
.bar { position: absolute; top: 2px; height: 12px; border-radius: 3px; min-width: 3px; }
.o-ok { background: #4ac26b; } .o-error { background: #ff8182; } .o-deadline { background: #d4a72c; }
.o-cancelled { background: #8c959f; } .o-broken { background: #fb8f44; } .o-other { background: #afb8c1; }
.fault { position: absolute; left: -16px; top: -3px; font-size: 0.9rem; }
.label { font-family: ui-monospace, monospace; font-size: 0.8rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.meta { font-size: 0.75rem; color: var(--muted); white-space: nowrap; }
.tag { display: inline-block; margin-left: 4px; padding: 0 5px; border-radius: 8px; font-size: 0.7rem; background: #ddf4ff; color: #0550ae; }
.tag.fault-tag { background: var(--fail-bg); color: var(--fail); } .tag.restart-tag { background: #fbefff; color: #8250df; }
.restart { margin: 4px 0; padding: 2px 8px; border-left: 4px solid #8250df; background: #fbefff; color: #8250df; font-size: 0.8rem; }
table.diff { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.8rem; }
table.diff td, table.diff th { border: 1px solid var(--line); padding: 2px 6px; text-align: left; }
table.diff tr.differs td { background: var(--fail-bg); }
`;

/** The report's script: plain JavaScript, no imports; draws a plan's detail on click. */
export const matrixHtmlScript = `
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("matrix-data").textContent);
  var plans = new Map();
  data.plans.forEach(function (p) { plans.set(p.id, p); });
  if (data.clean) plans.set(data.clean.id, data.clean);
  var detail = document.getElementById("detail");

  function el(tag, attrs) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "class") e.className = attrs[k]; else if (k === "style") e.style.cssText = attrs[k]; else e.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) e.append(arguments[i]);
    return e;
  }
  var outcomeClass = { OUTCOME_OK: "o-ok", OUTCOME_ERROR: "o-error", OUTCOME_TIMED_OUT: "o-deadline",
    OUTCOME_DEADLINE_EXCEEDED: "o-deadline", OUTCOME_CANCELLED: "o-cancelled", OUTCOME_STREAM_BROKEN: "o-broken" };
  function short(outcome) { return String(outcome).replace(/^OUTCOME_/, "").toLowerCase().replace(/_/g, " "); }

  /* A call is a retry when the calls of its step before it, since that step last answered OK, failed
     (in the same run: the first call after a restart is a resend from the journal, not a retry). */
  function retries(calls) {
    var failedSince = new Map();
    var run = 0;
    return calls.map(function (c) {
      if (c.restart !== run) { failedSince.clear(); run = c.restart; }
      var n = failedSince.get(c.step) || 0;
      failedSince.set(c.step, c.outcome === "OUTCOME_OK" ? 0 : n + 1);
      return n;
    });
  }

  function timeline(plan) {
    var calls = plan.calls || [];
    var max = Math.max(1, Math.max.apply(null, calls.map(function (c) { return c.endMs; }).concat([0])));
    var ticks = el("div", { class: "ticks" });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      ticks.append(el("span", { style: "left:" + f * 100 + "%" }, Math.round(f * max) + " ms"));
    });
    var box = el("div", { class: "timeline", id: "timeline", "data-calls": String(calls.length) },
      el("div", { class: "axis" }, el("span", {}, "call"), ticks, el("span", {}, "declared start–end, outcome")));
    var tries = retries(calls);
    var restart = 0;
    calls.forEach(function (c, i) {
      if (c.restart !== restart) {
        box.append(el("div", { class: "restart" }, "✂ killed (SIGKILL) at the crash point; restart " + c.restart + " resumes from its journal"));
        restart = c.restart;
      }
      var left = (c.startMs / max) * 100;
      var width = Math.max(((c.endMs - c.startMs) / max) * 100, 0.4);
      var label = el("div", { class: "label", title: c.entry || "(no entry)" }, "#" + c.sequence + " " + (c.step || "(main)") + " " + c.method);
      if (tries[i] > 0) label.append(el("span", { class: "tag" }, "retry " + tries[i]));
      if (c.fault) label.append(el("span", { class: "tag fault-tag" }, c.fault.kind.replace(/^FAULT_KIND_/, "").toLowerCase()));
      if (c.restart > 0) label.append(el("span", { class: "tag restart-tag" }, "run " + c.restart));
      var bar = el("div", { class: "bar " + (outcomeClass[c.outcome] || "o-other"), style: "left:" + left + "%;width:" + width + "%",
        title: short(c.outcome) + (c.status ? " " + c.status : "") + (c.fault ? ", fault " + c.fault.rule : "") });
      if (c.fault) bar.append(el("span", { class: "fault" }, "⚡"));
      box.append(el("div", { class: "call" }, label, el("div", { class: "track" }, bar),
        el("div", { class: "meta" }, c.startMs + "–" + c.endMs + " ms · " + short(c.outcome) + (c.status ? " " + c.status : ""))));
    });
    if (calls.length === 0) box.append(el("p", {}, "No calls recorded."));
    return box;
  }

  function runs(plan) {
    var list = el("ul", { class: "runs" });
    (plan.runs || []).forEach(function (r) {
      var how = r.signal ? "killed by " + r.signal : "exit " + r.exitCode;
      list.append(el("li", {}, (r.restart === 0 ? "first run" : "restart " + r.restart) + ": " + how));
    });
    return list;
  }

  function reasons(plan) {
    var list = el("div", { class: "reasons" });
    (plan.reasons || []).forEach(function (r) {
      list.append(el("p", { class: "reason" }, el("b", {}, r.code), " " + r.message));
      if (r.detail) list.append(el("pre", {}, r.detail));
    });
    return list;
  }

  /* The plan's calls beside the clean run's, row by row; rows that differ are marked. */
  function diff(plan) {
    var clean = data.clean;
    if (!clean || plan === clean || plan.verdict === "pass") return null;
    var cell = function (c) { return c ? (c.step || "(main)") + " " + (c.entry || "-") + " " + short(c.outcome) : ""; };
    var table = el("table", { class: "diff", id: "diff" },
      el("tr", {}, el("th", {}, "#"), el("th", {}, "clean run"), el("th", {}, "this plan")));
    var n = Math.max(clean.calls.length, plan.calls.length);
    for (var i = 0; i < n; i++) {
      var a = cell(clean.calls[i]), b = cell(plan.calls[i]);
      table.append(el("tr", { class: a === b ? "" : "differs" }, el("td", {}, String(i + 1)), el("td", {}, a), el("td", {}, b)));
    }
    return el("div", {}, el("h3", {}, "Calls against the clean run"), table);
  }

  function show(id) {
    var plan = plans.get(id);
    if (!plan) return;
    document.querySelectorAll(".selected").forEach(function (e) { e.classList.remove("selected"); });
    document.querySelectorAll("[data-plan]").forEach(function (e) { if (e.dataset.plan === id) e.classList.add("selected"); });
    detail.hidden = false;
    detail.replaceChildren(
      el("h2", {}, plan.name + " ", el("span", { class: "badge v-" + plan.verdict }, plan.verdict)),
      el("p", {}, el("code", {}, plan.id), " · session ", el("code", {}, plan.session), " · " + plan.restarts + " restart(s)"),
      reasons(plan), el("h3", {}, "Runs"), runs(plan), el("h3", {}, "Timeline"), timeline(plan), diff(plan));
    if (location.hash !== "#plan=" + encodeURIComponent(id)) history.replaceState(null, "", "#plan=" + encodeURIComponent(id));
  }

  document.addEventListener("click", function (e) {
    var target = e.target.closest ? e.target.closest("[data-plan]") : null;
    if (target) show(target.dataset.plan);
  });
  if (location.hash.indexOf("#plan=") === 0) show(decodeURIComponent(location.hash.slice(6)));
})();
`;
