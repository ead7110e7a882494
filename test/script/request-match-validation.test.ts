import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { scriptJsonSchema } from "../../src/cli/schema.js";
import { validate } from "../../src/cli/validate.js";

const zeros = "0".repeat(64);

const good = `replay: { mode: unordered }
entries:
  - reply: "hi"
    request:
      last_user: "hello"
      tool_results: [{ tool: read, content: "a.md" }, { tool: read, content: { sha256: "${zeros}", begins: "x" } }]
      tools: [read]
  - reply: "ho"
    request: { digest: "sha256:${zeros}" }
`;

const bad = `replay: { mode: sloppy }
entries:
  - reply: "hi"
    request:
      digest: "md5:abc"
  - reply: "hu"
    request:
      last_user: { sha256: "XYZ" }
      tool_results: [{ tool: read }]
      toolz: [a]
`;

const both = `entries:
  - reply: "ho"
    request:
      last_user: "x"
      digest: "sha256:${zeros}"
`;

describe("a script's request: and replay: as validate checks them", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "modelstub-request-"));
    await Promise.all([writeFile(join(dir, "good.yaml"), good), writeFile(join(dir, "bad.yaml"), bad), writeFile(join(dir, "both.yaml"), both)]);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function run(file: string): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
    try {
      return { code: await validate([join(dir, file)]), out, err };
    } finally {
      vi.restoreAllMocks();
    }
  }

  it("accepts the readable keys, long texts by their SHA-256, a digest, and every replay mode", async () => {
    expect(await run("good.yaml")).toEqual({ code: 0, out: `${join(dir, "good.yaml")}: ok (2 entries in 1 list)\n`, err: "" });
  });

  it("refuses a bad mode, a bad digest or hash, a tool result without content and an unknown key, each at its file:line:col", async () => {
    const { code, err } = await run("bad.yaml");
    expect(code).toBe(1);
    const f = join(dir, "bad.yaml");
    expect(err.split("\n").filter(Boolean)).toEqual([
      `${f}:1:17: replay.mode: expected one of "strict", "unordered", "order-only", got the text "sloppy" (hint: strict (default): each request must match the entry that answers it, the next in its list; unordered: the first unused entry whose request matches answers; order-only: requests are not compared)`,
      `${f}:5:15: entries[0].request.digest: expected sha256: and 64 lowercase hex digits, as record --match digest writes it, got the text "md5:abc" (hint: sha256:HEX of the canonical request (record --match digest); alone, in place of the readable keys)`,
      `${f}:8:28: entries[1].request.last_user.sha256: expected the text's SHA-256 as 64 lowercase hex digits, got the text "XYZ" (hint: the SHA-256 of the text's UTF-8 bytes, in lowercase hex)`,
      `${f}:9:22: entries[1].request.tool_results[0].content: expected a text, or a mapping {sha256, begins} for a long one, got nothing (hint: the result's text)`,
      `${f}:10:7: entries[1].request: unknown key \`toolz\` (hint: did you mean \`tools\`?)`,
    ]);
  });

  it("refuses a digest beside the readable keys", async () => {
    const { code, err } = await run("both.yaml");
    expect(code).toBe(1);
    expect(err).toBe(
      `${join(dir, "both.yaml")}:4:7: entries[0].request: digest and last_user both given: a digest stands for the whole request (hint: keep digest alone (record --match digest), or the readable keys alone (record's default))\n`,
    );
  });

  it("describes request: and replay: in the JSON Schema that modelstub schema prints", () => {
    const schema = scriptJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    expect(Object.keys(schema.properties["replay"]!.properties!)).toEqual(["mode"]);
    expect(JSON.stringify(schema)).toContain('"request":{');
    expect(JSON.stringify(schema)).toMatch(/"tool_results":\{"description":"The tool results after the last assistant message/);
  });
});
