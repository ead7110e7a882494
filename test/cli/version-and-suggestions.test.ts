import { execFile } from "node:child_process";
import { mkdtemp, readFile, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

let version: string;
beforeAll(async () => {
  version = (JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
});

const run = (cmd: string, args: string[], cwd: string) =>
  new Promise<string>((resolve, reject) => execFile(cmd, args, { cwd, timeout: 60_000 }, (e, stdout) => (e ? reject(e) : resolve(stdout))));

describe("modelstub --version", { timeout: testTimeoutMs(60_000) }, () => {
  it("prints the package.json version on its own and after every command", async () => {
    for (const args of [
      ["--version"],
      ...["serve", "validate", "schema", "episode", "health", "session"].map((c) => [c, "--version"]),
      ["session", "list", "--version"],
    ]) {
      expect(await runCli(args), args.join(" ")).toEqual({ code: 0, stdout: `modelstub ${version}\n`, stderr: "" });
    }
  });

  it("prints the version when installed from a packed tarball, away from the checkout", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-pack-"));
    // --ignore-scripts: the checkout is built already (pretest); packing must not rebuild it.
    const tarball = (await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], repoRoot)).trim().split("\n").pop()!;
    await run("tar", ["xzf", join(dir, tarball), "-C", dir], dir);
    // The dependencies an install would bring, without a registry.
    await symlink(join(repoRoot, "node_modules"), join(dir, "package", "node_modules"));
    expect(await run(process.execPath, [join(dir, "package", "bin", "modelstub.js"), "serve", "--version"], dir)).toBe(`modelstub ${version}\n`);
  });
});

describe("a mistyped command or option", { timeout: testTimeoutMs(60_000) }, () => {
  it("gets the command it was likely meant to be, and exit 2", async () => {
    expect(await runCli(["serv"])).toEqual({ code: 2, stdout: "", stderr: 'modelstub: unknown command "serv"; did you mean "serve"?\n' });
    expect(await runCli(["sesion", "list"])).toEqual({ code: 2, stdout: "", stderr: 'modelstub: unknown command "sesion"; did you mean "session"?\n' });
  });

  it("lists the commands when nothing is close", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^modelstub: unknown command "frobnicate"\n\nusage: modelstub <command>/);
  });

  it("gets the flag it was likely meant to be, on every command", async () => {
    const cases: [string[], string][] = [
      [["serve", "--scrpt", "x"], "modelstub serve: unknown option --scrpt; did you mean --script?"],
      [["health", "--adr", "x"], "modelstub health: unknown option --adr; did you mean --addr?"],
      [["episode", "--sesion", "x"], "modelstub episode: unknown option --sesion; did you mean --session?"],
      [["validate", "--hlep"], "modelstub validate: unknown option --hlep; did you mean --help?"],
      [["schema", "--hepl"], "modelstub schema: unknown option --hepl; did you mean --help?"],
      [["session", "list", "--jsno"], "modelstub session: unknown option --jsno; did you mean --json?"],
      [["session", "lst"], 'modelstub session: unknown command "lst"; did you mean "list"?'],
    ];
    for (const [args, line] of cases) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stderr.split("\n")[0], args.join(" ")).toBe(line);
    }
  });

  it("is only called unknown when no flag is close", async () => {
    const r = await runCli(["serve", "--frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe("modelstub serve: unknown option --frobnicate (see --help for the options)");
  });
});
