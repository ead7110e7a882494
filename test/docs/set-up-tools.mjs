// What every page's blocks get: the environment, the tools on PATH, the packed checkout, and the
// TypeScript project for `run: ts` blocks.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./settings.mjs";

// The environment every block runs in: no MODELSTUB_* setting of CI's own leaks into a server.
export function blockEnv(tools, tarball) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("MODELSTUB_") && !k.startsWith("npm_")) env[k] = v;
  env.PATH = `${tools}${path.delimiter}${process.env.PATH}`;
  env.MODELSTUB_DOCS_REPO = ROOT;
  if (tarball) env.MODELSTUB_DOCS_TARBALL = tarball;
  env.NO_COLOR = "1";
  return env;
}

export function setUpTools(tmp) {
  const tools = path.join(tmp, "bin");
  mkdirSync(tools, { recursive: true });
  const wrapper = path.join(tools, "modelstub");
  writeFileSync(wrapper, `#!/bin/sh\nexec node ${JSON.stringify(path.join(ROOT, "bin/modelstub.js"))} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const onPath = spawnSync("sh", ["-c", "command -v grpcurl"], { encoding: "utf8" }).status === 0;
  const built = path.join(ROOT, ".cache/bin/grpcurl");
  if (!existsSync(built) && !onPath && spawnSync("sh", ["-c", "command -v go"]).status === 0) {
    console.log("setup: building the pinned grpcurl (test/interop/build.sh grpcurl)");
    spawnSync("bash", [path.join(ROOT, "test/interop/build.sh"), "grpcurl"], { stdio: "inherit" });
  }
  if (existsSync(built)) symlinkSync(built, path.join(tools, "grpcurl"));
  else if (!onPath) console.log("setup: no grpcurl (needs Go for test/interop/build.sh grpcurl): blocks that call it will fail");
  return tools;
}

export function pack(tmp) {
  const r = spawnSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", tmp], { cwd: ROOT, encoding: "utf8" });
  const name = r.stdout.trim().split("\n").pop();
  if (r.status !== 0 || !name) throw new Error(`npm pack failed: ${r.stderr}`);
  return path.join(tmp, name);
}

/** The TypeScript project for `run: ts` blocks, made on first use: null and an error when it cannot be. */
let tsProject;
export function tsProjectFor(tmp, tarball) {
  if (tsProject) return tsProject;
  const dir = path.join(tmp, "ts-project");
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ name: "doc-blocks", private: true, type: "module" })}\n`);
  const dev = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies ?? {};
  const pins = ["typescript", "@types/node", "openai", "@anthropic-ai/sdk", "@google/genai"].filter((p) => dev[p]).map((p) => `${p}@${dev[p]}`);
  console.log(`setup: npm install ${path.basename(tarball)} ${pins.join(" ")} (the project for ts blocks)`);
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball, ...pins], { cwd: dir, encoding: "utf8" });
  tsProject = r.status === 0 ? { dir } : { error: `npm install in the ts project failed:\n${r.stdout}${r.stderr}` };
  return tsProject;
}
