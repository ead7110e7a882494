// External load generator and peers: ghz and GripMock, pinned, installed with `go install` into
// .cache/bin, and mock-llm, pinned, installed with npm into .cache/peers/mock-llm, all by
// bench/install-tools.sh. Where the module proxy refuses GripMock, bench/peer/build-gripmock.sh
// builds it from source into .cache/bin and writes the commit it built beside it
// (.cache/bin/gripmock.commit). All optional: the bench says what it fell back to or skipped.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PEERS_DIR, TOOLS_BIN } from "./paths.mjs";

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

/**
 * The binary's path, the module version it was built from (go version -m) and, for a binary built
 * from a source checkout (bench/peer/build-gripmock.sh), the commit: read from `<bin>.commit`
 * when that file is no older than the binary (a later `go install` over it makes it stale), else
 * from the binary's vcs.revision stamp. Null when there is no binary.
 */
export function findTool(name) {
  const envName = `${name.toUpperCase()}_BIN`;
  const candidates = [process.env[envName], path.join(TOOLS_BIN, name), which(name)].filter(Boolean);
  const bin = candidates.find((f) => fs.existsSync(f));
  if (!bin) return null;
  let version = "unknown";
  let commit = null;
  try {
    const info = execFileSync("go", ["version", "-m", bin], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const m = new RegExp(`^\\s*mod\\s+${PINNED[name].module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\s+(\\S+)`, "m").exec(info);
    if (m) version = m[1];
    commit = /^\s*build\s+vcs\.revision=([0-9a-f]{40})\s*$/m.exec(info)?.[1] ?? null;
  } catch {}
  try {
    const commitFile = `${bin}.commit`;
    if (fs.statSync(commitFile).mtimeMs >= fs.statSync(bin).mtimeMs) commit = fs.readFileSync(commitFile, "utf8").trim().split(/\s+/)[0] || commit;
  } catch {}
  return { bin, version, pinned: PINNED[name].version, ...(commit ? { commit } : {}) };
}

// npm peers: installed with `npm install --prefix .cache/peers/<name> <package>@<version>`.
export const PINNED_NPM = {
  "mock-llm": { package: "@dwmkerr/mock-llm", version: "0.1.29" },
  // The import-cost peer (sections/measure-import.mjs installs it into its own fresh project).
  aimock: { package: "@copilotkit/aimock", version: "1.43.0" },
};

/**
 * An npm-installed peer: { name, package, dir, main (its bin script, run with node), version
 * (from its package.json), pinned }, or null. MOCK_LLM_DIR (the package's own directory) points
 * elsewhere.
 */
export function findNpmPeer(name) {
  const pin = PINNED_NPM[name];
  const envName = `${name.toUpperCase().replace(/-/g, "_")}_DIR`;
  const candidates = [process.env[envName], path.join(PEERS_DIR, name, "node_modules", ...pin.package.split("/"))].filter(Boolean);
  for (const dir of candidates) {
    const pkgFile = path.join(dir, "package.json");
    if (!fs.existsSync(pkgFile)) continue;
    try {
      const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
      const bin = typeof pkg.bin === "string" ? pkg.bin : (pkg.bin?.[name] ?? Object.values(pkg.bin ?? {})[0] ?? pkg.main);
      const main = path.join(dir, bin);
      if (!fs.existsSync(main)) continue;
      return { name, package: pkg.name, dir, main, version: pkg.version, pinned: pin.version };
    } catch {}
  }
  return null;
}
