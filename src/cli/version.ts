import { readFileSync } from "node:fs";

/**
 * The version in modelstub's own package.json. Found by walking up from this module, not by a
 * fixed relative path: the code runs from dist/bundle/ (the CLI), from dist/src/cli/ (the tsc
 * output) and from src/cli/ (tests), each a different depth below the package root, in a
 * checkout or installed under node_modules/modelstub. Read only when asked for (--version), so
 * `serve` pays nothing for it. The name check skips a package.json of another package on the way.
 */
export function packageVersion(from: string | URL = import.meta.url): string {
  for (let dir = new URL(".", from); ; dir = new URL("..", dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "modelstub" && pkg.version) return pkg.version;
    } catch {
      // No package.json here (or not JSON): keep walking up.
    }
    if (dir.pathname === "/" || new URL("..", dir).href === dir.href) return "unknown";
  }
}
