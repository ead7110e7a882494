import { describe, expect, it } from "vitest";
import { scriptJsonSchema } from "../../src/cli/schema.js";
import { runCli } from "../support/run-cli.js";

/*
 * `modelstub validate` and `modelstub schema` as a user runs them: the built CLI in its own
 * process, from the repository root, so paths print as given.
 */

const bad = "test/fixtures/bad-scripts/unknown-key-latncy.yaml";
const unquoted = "test/fixtures/bad-scripts/unquoted-template-reply.yaml";

describe("modelstub validate", () => {
  it("exits 0 on a good file and says how many entries it has", async () => {
    const r = await runCli(["validate", "examples/hello.yaml"]);
    expect(r).toEqual({ code: 0, stdout: "examples/hello.yaml: ok (1 entry in 1 list)\n", stderr: "" });
  });

  it("exits 1 on a good file and two bad ones, printing ok for the good one and the exact problem lines of the bad ones", async () => {
    const r = await runCli(["validate", "examples/hello.yaml", bad, unquoted]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("examples/hello.yaml: ok (1 entry in 1 list)\n");
    expect(r.stderr).toBe(
      `${[
        `${bad}:3:5: entries[0]: unknown key \`latncy\` (hint: did you mean \`latency\`?)`,
        `${unquoted}:2:12: entries[0].reply: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write "{{last_user}}")`,
      ].join("\n")}\n`,
    );
  });
});

describe("modelstub schema", () => {
  it("prints the JSON Schema of the script format and exits 0", async () => {
    const r = await runCli(["schema"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual(scriptJsonSchema());
  });
});
