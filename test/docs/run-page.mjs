// One page: its scratch folder, its links, then each block as its marker says, in order, and at the
// end the page's background servers stopped. Prints the ok/FAIL/not run line of each.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brokenLinks } from "./broken-links.mjs";
import { kindOf, parseBlocks } from "./parse-blocks.mjs";
import { blockEnv, tsProjectFor } from "./set-up-tools.mjs";
import { firstLines, listOnly, rel, ROOT, STOP_TIMEOUT_MS } from "./settings.mjs";
import { finish, killGroup, leftovers, ready, startGroup, waitEnd } from "./start-group.mjs";

export async function runPage(page, tmp, tools, tarball, tally) {
  const name = rel(page);
  const blocks = parseBlocks(readFileSync(page, "utf8"));
  const slug = name.replace(/[^A-Za-z0-9]+/g, "-");
  const dir = path.join(tmp, "pages", slug);
  mkdirSync(dir, { recursive: true });
  // The folder stands for a checkout: its examples and protos, bin/modelstub.js, a package.json
  // naming that bin (so `npx modelstub` runs it, as in a checkout), and buf in node_modules/.bin
  // (the docs' `npx buf curl` examples). No node_modules/.bin/modelstub: a checkout has none.
  for (const d of ["examples", "proto"]) cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true });
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  symlinkSync(path.join(ROOT, "bin/modelstub.js"), path.join(dir, "bin/modelstub.js"));
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "modelstub", private: true, type: "module", bin: { modelstub: "bin/modelstub.js" } }, null, 2)}\n`,
  );
  mkdirSync(path.join(dir, "node_modules/.bin"), { recursive: true });
  const buf = path.join(ROOT, "node_modules/.bin/buf");
  if (existsSync(buf)) symlinkSync(buf, path.join(dir, "node_modules/.bin/buf"));
  const scripts = path.join(tmp, "scripts", slug);
  mkdirSync(scripts, { recursive: true });
  const env = blockEnv(tools, tarball);
  const background = [];
  const ok = (b, what) => {
    tally.passed++;
    console.log(`ok      ${name}:${b.line} ${what}`);
  };
  const fail = (b, what, why, out) => {
    tally.failed++;
    console.log(`FAIL    ${name}:${b.line} ${what}: ${why}${out?.trim() ? `\n${firstLines(out)}` : ""}`);
  };

  const broken = brokenLinks(page, readFileSync(page, "utf8"));
  if (broken.length) {
    tally.failed++;
    console.log(`FAIL    ${name}: links: ${broken.length} broken\n${broken.map((x) => `     ${x}`).join("\n")}`);
  } else {
    tally.passed++;
    console.log(`ok      ${name}: links`);
  }

  for (const b of blocks) {
    const k = kindOf(b);
    const head =
      b.text
        .split("\n")
        .find((l) => l.trim() && !l.trim().startsWith("#"))
        ?.trim()
        .slice(0, 70) ?? "";
    const what = `(${k.kind === "none" ? b.lang || "text" : k.kind}) ${head}`;
    if (k.kind === "none") continue;
    if (k.kind === "bad") {
      fail(b, `(${b.lang || "no language"})`, k.why);
      continue;
    }
    if (k.kind === "not-run") {
      tally.notRun++;
      console.log(`not run ${name}:${b.line} (${b.lang}) ${head}: ${k.reason}`);
      continue;
    }
    if (listOnly) {
      console.log(`would   ${name}:${b.line} ${what}`);
      continue;
    }
    if (k.kind === "file") {
      const target = path.join(dir, k.name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, b.text);
      ok(b, `(file ${k.name})`);
      continue;
    }
    if (k.kind === "run" || k.kind === "background") {
      const script = path.join(scripts, `L${b.line}.sh`);
      // A background block's bash outlives the SIGTERM sent to its group: its server gets the
      // signal, shuts down, and the block's own exit status is the server's.
      writeFileSync(script, `${k.kind === "background" ? "trap 'true' TERM\n" : ""}set -euo pipefail\n${b.text}`);
      const job = startGroup("bash", [script], { cwd: dir, env });
      if (k.kind === "run") {
        const why = await finish(job);
        if (why) fail(b, what, why, job.out);
        else ok(b, what);
      } else {
        const why = await ready(job);
        if (why) {
          killGroup(job.pgid, "SIGKILL");
          fail(b, what, why, job.out);
        } else {
          console.log(`started ${name}:${b.line} ${what}`);
          background.push({ b, what, job });
        }
      }
      continue;
    }
    if (k.kind === "ts") {
      const project = tsProjectFor(tmp, tarball);
      if (project.error) {
        fail(b, what, project.error);
        continue;
      }
      const base = `${slug}-L${b.line}`;
      writeFileSync(path.join(project.dir, "src", `${base}.ts`), b.text);
      const tsc = path.join(project.dir, "node_modules/typescript/bin/tsc");
      const check = spawnSync(
        "node",
        [
          tsc,
          "--strict",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--target",
          "es2022",
          "--skipLibCheck",
          "--outDir",
          "out",
          `src/${base}.ts`,
        ],
        { cwd: project.dir, encoding: "utf8" },
      );
      if (check.status !== 0) {
        fail(b, what, "tsc --strict failed", check.stdout + check.stderr);
        continue;
      }
      const job = startGroup("node", [path.join(project.dir, "out", `${base}.js`)], { cwd: dir, env });
      const why = await finish(job);
      if (why) fail(b, what, why, job.out);
      else ok(b, what);
    }
  }

  // The page's servers: SIGTERM to each group, then each must exit 0 and leave nothing.
  for (const { b, what, job } of background) {
    if (job.exited) {
      fail(b, what, `ended on its own before the page did (${job.signal ?? job.code})`, job.out);
      await leftovers(job);
      continue;
    }
    killGroup(job.pgid, "SIGTERM");
    if (!(await waitEnd(job, STOP_TIMEOUT_MS))) {
      killGroup(job.pgid, "SIGKILL");
      await job.done;
      fail(b, what, `did not stop within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM`, job.out);
      continue;
    }
    const left = await leftovers(job);
    if (job.code !== 0) fail(b, what, `exited ${job.signal ? `on ${job.signal}` : job.code} after SIGTERM`, job.out);
    else if (left) fail(b, what, left, job.out);
    else ok(b, `${what} (stopped by SIGTERM, exit 0)`);
  }
}
