// A tiny executor for `modelstub matrix run` tests (issue 30): plan, run the tool the plan asks
// for, report; over the HTTP front (chat completions), with a retry policy and a journal in
// MODELSTUB_WORKDIR so that a restart (MODELSTUB_RESTART > 0) resumes where the crash left it.
// BROKEN picks a deliberate bug: retry-all (retries a non-retryable 500), rerun (ignores its
// journal on restart, so the tool runs again), random (a request that differs run to run).
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = process.env;
const broken = env.BROKEN ?? "";
const journalFile = join(env.MODELSTUB_WORKDIR, "journal.json");
const journal = broken !== "rerun" && existsSync(journalFile) ? JSON.parse(readFileSync(journalFile, "utf8")) : { done: {} };
const save = () => writeFileSync(journalFile, JSON.stringify(journal));

/** Retried: 503 (UNAVAILABLE) and 408 (DEADLINE_EXCEEDED); with BROKEN=retry-all, every error. */
const retryable = (status) => status === 503 || status === 408 || (broken === "retry-all" && status >= 400);

async function call(step, messages) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${env.MODELSTUB_HTTP_URL}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-modelstub-session": env.MODELSTUB_SESSION, "x-modelstub-step": step },
      body: JSON.stringify({ model: "stub", messages }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = await res.json();
    if (res.ok) return body.choices[0].message;
    if (!retryable(res.status) || attempt === 3) {
      console.error(`giving up on ${step}: HTTP ${res.status} ${body.error?.message ?? ""}`);
      process.exit(2);
    }
  }
}

const task = broken === "random" ? `write the notes (${Math.random()})` : "write the notes";
const messages = [{ role: "user", content: task }];
if (!journal.plan) {
  journal.plan = await call("plan", messages);
  save();
}
messages.push(journal.plan);
for (const t of journal.plan.tool_calls ?? []) {
  if (!journal.done[t.id]) {
    appendFileSync(join(env.MODELSTUB_WORKDIR, "side-effects.log"), `${t.function.name} ${t.function.arguments}\n`); // the side effect
    journal.done[t.id] = "ok";
    save();
  }
  messages.push({ role: "tool", tool_call_id: t.id, content: journal.done[t.id] });
}
const report = await call("report", messages);
console.log(report.content);
