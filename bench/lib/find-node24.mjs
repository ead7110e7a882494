// findNode24: the Node 24 binary `bash .ci/container/get-node.sh` fetches into .cache/node/<version>/bin/node
// (the version the Dockerfile's base image carries), with its version; null when none is there.
// The bench never fetches it: without it the Node 24 start-up rows say "not measured".
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_DIR } from "./paths.mjs";

export function findNode24() {
  const dir = path.join(REPO_DIR, ".cache", "node");
  const found = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((v) => /^24\.\d+\.\d+$/.test(v) && fs.existsSync(path.join(dir, v, "bin", "node")))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  if (!found.length) return null;
  const bin = path.join(dir, found.at(-1), "bin", "node");
  try {
    return { bin, version: execFileSync(bin, ["--version"], { encoding: "utf8" }).trim() };
  } catch {
    return null;
  }
}
