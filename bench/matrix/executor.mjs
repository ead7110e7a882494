// The bench's executor (bench/matrix-jobs.mjs): 12 model calls on step "turn" over the HTTP
// front, each retried on 503 and 408, with a journal in MODELSTUB_WORKDIR so that a restart
// after a crash resumes at the first turn not done. Exits 2 on any other error.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = process.env;
const journalFile = join(env.MODELSTUB_WORKDIR, "journal.json");
const journal = existsSync(journalFile) ? JSON.parse(readFileSync(journalFile, "utf8")) : { turns: [] };
let last = "";
for (let turn = journal.turns.length; turn < 12; turn++) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${env.MODELSTUB_HTTP_URL}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-modelstub-session": env.MODELSTUB_SESSION, "x-modelstub-step": "turn" },
      body: JSON.stringify({ model: "stub", messages: [{ role: "user", content: `turn ${turn}` }] }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = await res.json();
    if (res.ok) {
      last = body.choices[0].message.content;
      break;
    }
    if ((res.status !== 503 && res.status !== 408) || attempt === 3) process.exit(2);
  }
  journal.turns.push(last);
  writeFileSync(journalFile, JSON.stringify(journal));
}
console.log(last);
