import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { Code, type ModelCallError, type ModelPort } from "../../src/index.js";
import { userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { aliasChain, compactKeys, compactSequences, deepBrackets, indentedMappings } from "../script/script-limits-fixture.js";

/*
 * Issue 27, item 1: `rules: ` and 2,000 brackets (4 KB) sent to SetFaultPlan was refused once,
 * and the second or third send aborted the server ("FATAL ERROR: RegExpCompiler Allocation
 * failed - process out of memory"), every session's episode lost. A real `modelstub serve`,
 * since a crash is the point: it must refuse each text, every time, and go on serving.
 */

const tooDeep = /: lists and mappings nest deeper than 64 levels here \(hint: /;

describe("a server sent scripts and fault plans nested thousands of levels deep", () => {
  let serve: Awaited<ReturnType<typeof startServeProcess>>;
  let control: ControlClient;
  let port: ModelPort;
  beforeAll(async () => {
    serve = await startServeProcess(["--grpc", "127.0.0.1:0"]);
    control = createControlClient(serve.address);
    port = openGrpcPort(serve.address);
    await control.call("LoadScript", { session: "bystander", script: "entries:\n  - repeat: true\n    reply: still here\n" });
  });
  afterAll(async () => {
    control.close();
    port.close();
    if (serve.child.exitCode === null) serve.child.kill("SIGTERM");
    await serve.exit;
  });

  async function refusal(method: "LoadScript" | "SetFaultPlan", text: string, sourceName: string): Promise<ModelCallError> {
    const err = await (method === "LoadScript"
      ? control.call(method, { session: "hostile", script: text, sourceName })
      : control.call(method, { session: "hostile", plan: text, sourceName })
    ).then(
      () => undefined,
      (e: unknown) => e as ModelCallError,
    );
    expect(err, `${sourceName} was accepted`).toBeDefined();
    return err!;
  }

  async function expectServing(): Promise<void> {
    expect(serve.child.exitCode, serve.output().stderr).toBeNull();
    expect((await port.generate(userRequest("hello?"), { session: "bystander" })).message?.content).toBe("still here");
  }

  it("refuses SetFaultPlan with `rules:` and 2,000 brackets three times, saying where, and serves on", async () => {
    for (let i = 0; i < 3; i++) {
      const err = await refusal("SetFaultPlan", deepBrackets(2000, "rules: "), "deep-plan.yaml");
      expect(err.code).toBe(Code.INVALID_ARGUMENT);
      expect(err.details).toMatch(/^cannot load fault plan deep-plan\.yaml:1:71: rules(\[0\]){63}: lists and mappings nest deeper than 64 levels here/);
    }
    await expectServing();
  });

  it("refuses LoadScript with 2,000 brackets three times, and one of 250,000 (488 KB) twice, and serves on", async () => {
    for (let i = 0; i < 3; i++) {
      const err = await refusal("LoadScript", deepBrackets(2000, "entries: "), "deep.yaml");
      expect(err.code).toBe(Code.INVALID_ARGUMENT);
      expect(err.details).toMatch(/^cannot load script deep\.yaml:1:73: entries(\[0\]){63}: lists and mappings nest deeper than 64 levels here/);
    }
    for (let i = 0; i < 2; i++) {
      const err = await refusal("LoadScript", deepBrackets(250_000), "huge-deep.yaml");
      expect(err.code).toBe(Code.INVALID_ARGUMENT);
      expect(err.details).toMatch(/^cannot load script huge-deep\.yaml:1:65: (\[0\]){64}: lists and mappings nest deeper than 64 levels here/);
    }
    await expectServing();
  });

  it("refuses nesting in block style (`- - -`, `? ? ?`, indentation) and through a chain of aliases, and serves on", async () => {
    for (const [text, name, where] of [
      [compactSequences(100_000), "dashes.yaml", /^cannot load script dashes\.yaml:2:129: entries(\[0\]){63}/],
      [compactKeys(100_000), "keys.yaml", /^cannot load script keys\.yaml:1:129: /],
      [indentedMappings(700), "indented.yaml", /^cannot load script indented\.yaml:65:65: a(\.a){63}/],
    ] as const) {
      const err = await refusal("LoadScript", text, name);
      expect(err.code).toBe(Code.INVALID_ARGUMENT);
      expect(err.details).toMatch(where);
      expect(err.details).toMatch(tooDeep);
    }
    const err = await refusal("LoadScript", aliasChain(20, 30), "chain.yaml");
    expect(err.code).toBe(Code.INVALID_ARGUMENT);
    expect(err.details).toMatch(
      /^cannot load script chain\.yaml:7:51: entries\[0\]\.reply\.tool_calls\[0\]\.arguments\.a1(\[0\]){30}: the alias \*a0 stands for lists and mappings 30 levels deep, here 37 levels down: 67 levels, deeper than 64 \(hint: /,
    );
    await expectServing();
  });
});
