// The compile worker starts under the Node options its process was started with: a program run
// as `node --input-type=module -e ...` (Node refuses that option to a worker started from a file,
// so it is left out), and one run with a process-wide option such as --expose-gc (inherited as
// is). Each is a fresh Node process loading a script through the worker, from the built package.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repoRoot = new URL("../../", import.meta.url).pathname;
const body = `
  const server = await modelstub.startServer({ grpc: false });
  const { entries } = await server.control.loadScript("s", "entries:\\n  - reply: checked in the worker\\n");
  await server.close();
  console.log("entries " + entries);
`;

describe("the compile worker under the process's Node options", () => {
  it("checks a script for `node --input-type=module -e`", async () => {
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", `const modelstub = await import("modelstub");${body}`], { cwd: repoRoot });
    expect(stdout.trim()).toBe("entries 1");
  });

  it("checks a script for `node --expose-gc -e`", async () => {
    const { stdout } = await run(process.execPath, ["--expose-gc", "-e", `import("modelstub").then(async (modelstub) => {${body}});`], { cwd: repoRoot });
    expect(stdout.trim()).toBe("entries 1");
  });
});
