// measureImport (issue 31): what a test file pays to import the library. The packed package
// (`npm pack`) is installed into a fresh project as a user installs it (production dependencies
// only), and `await import("modelstub")` is timed in a fresh Node process per import; aimock,
// the LLM mock teams pick today (pinned), is installed into its own fresh project and imported
// the same way, the two interleaved round by round (the order flips each round), so both run
// at the same load. Reports the medians, their ratio, and each project's installed size and
// package count.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { cfg, log } from "../lib/bench-config.mjs";
import { modelstubBuilt, notes } from "../lib/bench-setup.mjs";
import { CACHE_DIR, REPO_DIR } from "../lib/paths.mjs";
import { runTool } from "../lib/proc.mjs";
import { median, ratio, round } from "../lib/stats.mjs";
import { PINNED_NPM } from "../lib/tools.mjs";

const IMPORT_DIR = path.join(CACHE_DIR, "import");
// One line, run by `node probe.mjs NAME` in the project's folder: the name resolves from there.
const PROBE = "const t = performance.now();\nawait import(process.argv[2]);\nconsole.log(JSON.stringify({ ms: performance.now() - t }));\n";

/** npm with the checkout's download cache (.cache/npm, as .ci/run.d/35-package.sh uses). */
function npm(args, cwd) {
  const env = {
    ...process.env,
    npm_config_cache: path.join(REPO_DIR, ".cache", "npm"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  return execFileSync("npm", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
}

/** A new empty project in `dir` (what was there is removed), with the probe. */
function freshProject(dir, name) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ name, private: true, type: "module" })}\n`);
  fs.writeFileSync(path.join(dir, "probe.mjs"), PROBE);
}

/** Bytes on disk under `dir` (files' sizes; what `du --apparent-size` counts). */
function sizeOf(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
  return total;
}

/** The installed packages of a project: npm's own record of node_modules, every package once. */
function installed(dir) {
  const lock = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", ".package-lock.json"), "utf8"));
  return {
    packages: Object.keys(lock.packages).filter((p) => p.startsWith("node_modules/")).length,
    mb: round(sizeOf(path.join(dir, "node_modules")) / 2 ** 20, 1),
  };
}

/** Installs the packed checkout into a fresh project; the project's folder. */
function installModelstub() {
  const dir = path.join(IMPORT_DIR, "modelstub-app");
  freshProject(dir, "modelstub-import");
  const [packed] = JSON.parse(npm(["pack", "--ignore-scripts", "--json", "--pack-destination", IMPORT_DIR], REPO_DIR));
  npm(["install", "--omit=dev", "--prefer-offline", "--loglevel=error", path.join(IMPORT_DIR, packed.filename)], dir);
  return dir;
}

/** Installs the pinned aimock into a fresh project, unless that project already has it; the project's folder. */
function installAimock() {
  const { package: name, version } = PINNED_NPM.aimock;
  const dir = path.join(IMPORT_DIR, "aimock-app");
  try {
    if (JSON.parse(fs.readFileSync(path.join(dir, "node_modules", ...name.split("/"), "package.json"), "utf8")).version === version) return dir;
  } catch {}
  freshProject(dir, "aimock-import");
  npm(["install", "--prefer-offline", "--loglevel=error", `${name}@${version}`], dir);
  return dir;
}

/** One import in a fresh process: ms from before import() to after, or throws. */
async function importOnce(dir, name) {
  const res = await runTool(path.join(dir, "probe.mjs"), [name], { node: true, timeoutMs: 60_000 });
  const ms = JSON.parse(res.stdout.trim().split("\n").pop() ?? "null")?.ms;
  if (typeof ms !== "number") throw new Error(`import("${name}") failed (${res.code ?? res.signal}): ${res.stderr.slice(-300)}`);
  return ms;
}

export async function measureImport() {
  const runs = cfg.import.runs;
  const out = { runs, aimock: null, modelstub: null };
  if (!modelstubBuilt) return out;
  fs.mkdirSync(IMPORT_DIR, { recursive: true });
  log("import: npm pack, and npm install of the tarball into a fresh project");
  const modelstubDir = installModelstub();
  let aimockDir = null;
  try {
    log(`import: npm install ${PINNED_NPM.aimock.package}@${PINNED_NPM.aimock.version} into a fresh project`);
    aimockDir = installAimock();
  } catch (e) {
    notes.push(`aimock could not be installed (${e.message.split("\n")[0]}): import measured for modelstub alone`);
  }
  const times = { modelstub: [], aimock: [] };
  for (let r = 0; r < runs; r++) {
    const pair = [["modelstub", modelstubDir, "modelstub"], ...(aimockDir ? [["aimock", aimockDir, PINNED_NPM.aimock.package]] : [])];
    if (r % 2) pair.reverse();
    for (const [key, dir, name] of pair) times[key].push(await importOnce(dir, name));
  }
  const summary = (ms, dir) => ({ medianMs: round(median(ms), 1), runsMs: ms.map((x) => round(x, 1)), ...installed(dir) });
  out.modelstub = summary(times.modelstub, modelstubDir);
  if (aimockDir) {
    out.aimock = { package: PINNED_NPM.aimock.package, version: PINNED_NPM.aimock.version, ...summary(times.aimock, aimockDir) };
    out.modelstub.ratio = round(ratio(out.modelstub.medianMs, out.aimock.medianMs), 2);
  }
  return out;
}
