// External load generator and peer: ghz and GripMock, pinned, installed with `go install` into
// .cache/bin by bench/install-tools.sh. Both are optional: the bench says what it fell back to.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { TOOLS_BIN } from "./paths.mjs";

export const PINNED = {
  ghz: { module: "github.com/bojand/ghz", pkg: "github.com/bojand/ghz/cmd/ghz", version: "v0.120.0" },
  gripmock: { module: "github.com/bavix/gripmock/v3", pkg: "github.com/bavix/gripmock/v3", version: "v3.9.0" },
};

function which(name) {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const f = path.join(dir, name);
    if (dir && fs.existsSync(f)) return f;
  }
  return null;
}

/** The binary's path and the module version it was built from (go version -m), or null. */
export function findTool(name) {
  const envName = `${name.toUpperCase()}_BIN`;
  const candidates = [process.env[envName], path.join(TOOLS_BIN, name), which(name)].filter(Boolean);
  const bin = candidates.find((f) => fs.existsSync(f));
  if (!bin) return null;
  let version = "unknown";
  try {
    const info = execFileSync("go", ["version", "-m", bin], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const m = new RegExp(`^\\s*mod\\s+${PINNED[name].module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\s+(\\S+)`, "m").exec(info);
    if (m) version = m[1];
  } catch {}
  return { bin, version, pinned: PINNED[name].version };
}
