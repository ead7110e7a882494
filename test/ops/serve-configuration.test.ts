import { describe, expect, it } from "vitest";
import type { OptionSpec } from "../../src/cli/options.js";
import { Code } from "../../src/index.js";
import { createControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { runCli, startServeProcess } from "../support/run-cli.js";
import { callLines, withServe, type ServeProcess } from "./serve-process-fixture.js";

describe("configuration", () => {
  it("takes the address and the clock from MODELSTUB_* variables, flags winning", async () => {
    const s = await startServeProcess([], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(s.output().stderr).toContain("virtual clock");
    s.child.kill("SIGTERM");
    await s.exit;
    const f = await startServeProcess(["--clock", "real"], { env: { MODELSTUB_GRPC: "127.0.0.1:0", MODELSTUB_CLOCK: "virtual" } });
    expect(f.output().stderr).toContain("real clock");
    f.child.kill("SIGTERM");
    await f.exit;
  });

  const oneCall = async (s: ServeProcess) => {
    const port = openGrpcPort(s.address);
    try {
      await port.generate(userRequest("PROBE-ECHO x"));
    } finally {
      port.close();
    }
  };

  it("takes a boolean from its variable, and a flag wins: MODELSTUB_QUIET, --quiet, and --log-level over MODELSTUB_QUIET", async () => {
    // Three servers side by side: one after another they can outlast the test's time on a loaded machine.
    const [fromVariable, flagOverVariable, levelOverVariable] = await Promise.all([
      withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_QUIET: "1" }, oneCall),
      withServe(["--grpc", "127.0.0.1:0", "--quiet"], { MODELSTUB_QUIET: "0" }, oneCall),
      // MODELSTUB_QUIET=1 in a container's environment does not hide an explicit --log-level.
      withServe(["--grpc", "127.0.0.1:0", "--log-level", "info"], { MODELSTUB_QUIET: "1" }, oneCall),
    ]);
    expect(callLines(fromVariable)).toEqual([]);
    expect(callLines(flagOverVariable)).toEqual([]);
    expect(callLines(levelOverVariable)).toHaveLength(1);
  });

  it("takes an integer from its variable, and its flag wins: MODELSTUB_MAX_SESSIONS and --max-sessions", async () => {
    const secondSession = (result: { code: number }) => async (s: ServeProcess) => {
      const port = openGrpcPort(s.address);
      try {
        await port.generate(userRequest("PROBE-ECHO x"), { session: "one" });
        result.code = await port.generate(userRequest("PROBE-ECHO x"), { session: "two" }).then(
          () => Code.OK,
          (e: { code: number }) => e.code,
        );
      } finally {
        port.close();
      }
    };
    const fromEnv = { code: -1 };
    await withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_MAX_SESSIONS: "1" }, secondSession(fromEnv));
    expect(fromEnv.code).toBe(Code.RESOURCE_EXHAUSTED);
    const fromFlag = { code: -1 };
    await withServe(["--grpc", "127.0.0.1:0", "--max-sessions", "2"], { MODELSTUB_MAX_SESSIONS: "1" }, secondSession(fromFlag));
    expect(fromFlag.code).toBe(Code.OK);
  });

  it("takes the control token from its variable, and its flag wins: MODELSTUB_CONTROL_TOKEN and --control-token", async () => {
    const listWith = (token: string, s: ServeProcess) => {
      const control = createControlClient(s.address, { token });
      return control
        .call("ListSessions", {})
        .then(
          () => Code.OK,
          (e: { code: number }) => e.code,
        )
        .finally(() => control.close());
    };
    await withServe(["--grpc", "127.0.0.1:0"], { MODELSTUB_CONTROL_TOKEN: "from-env" }, async (s) => {
      expect(await listWith("from-env", s)).toBe(Code.OK);
      expect(await listWith("other", s)).toBe(Code.UNAUTHENTICATED);
    });
    await withServe(["--grpc", "127.0.0.1:0", "--control-token", "from-flag"], { MODELSTUB_CONTROL_TOKEN: "from-env" }, async (s) => {
      expect(await listWith("from-flag", s)).toBe(Code.OK);
      expect(await listWith("from-env", s)).toBe(Code.UNAUTHENTICATED);
    });
  });

  it("documents every option, with its variable, default and allowed values, in `serve --help`", async () => {
    const serveOptions: readonly OptionSpec[] = (await import("../../src/cli/serve-options.js")).serveOptions;
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const o of serveOptions) {
      expect(help.stdout).toContain(`--${o.name}`);
      if (o.env) expect(help.stdout).toContain(o.env);
      if (o.default !== undefined) expect(help.stdout).toContain(`default ${o.default}`);
      if (o.values) expect(help.stdout).toContain(`one of ${o.values.join(", ")}`);
    }
    // Every value-taking option names what it takes.
    expect(help.stdout).not.toContain("VALUE");
    expect(help.stdout).toContain("--log-level LEVEL");
  });
});
