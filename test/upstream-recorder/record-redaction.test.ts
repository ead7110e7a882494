import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { ModelCallError } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { userRequest } from "../support/requests.js";
import { testTimeoutMs } from "../support/test-timeout.js";

const key = "sk-LEAKYKEY-1234567890";
/** The key as a JSON text can spell it: every character a \u escape. */
const escapedKey = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
/** Every spelling of the key a reader of the script could decode at a glance. */
const leaks = (text: string) => [key, escapedKey, key.slice(0, 8)].filter((s) => text.includes(s));

describe("modelstub record keeps the upstream's key out of the script and the client's answers", { timeout: testTimeoutMs(60_000) }, () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });

  /** A loopback upstream answering the nth request with the nth body (status, content-type, text). */
  async function recorderBefore(answers: [number, string, string][]) {
    let n = 0;
    const handler: RequestListener = (req, res) => {
      const [status, type, body] = answers[n++] ?? [500, "text/plain", "no answer"];
      req.resume().on("end", () => res.writeHead(status, { "content-type": type }).end(body));
    };
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))) });
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const recorder = await startRecorder({ upstream: createOpenAiUpstream(baseUrl, { apiKey: key }), redaction: { secrets: [key], names: new Set() } });
    const port = openGrpcPort(recorder.grpcAddress);
    open.push(recorder, port);
    return { recorder, port };
  }

  it("scrubs the key from a tool call's name, from its arguments even when JSON escapes spell it, and from the model named in the comment", async () => {
    const args = `{"token":"${escapedKey}","path":"a.md"}`;
    const completion = {
      model: `ft:${key}`,
      choices: [
        {
          message: { content: null, tool_calls: [{ id: "c1", type: "function", function: { name: `n_${key}`, arguments: args } }] },
          finish_reason: "tool_calls",
        },
      ],
    };
    const { recorder, port } = await recorderBefore([[200, "application/json", JSON.stringify(completion)]]);
    const reply = await port.generate(userRequest("hi"));
    const script = recorder.scriptText();
    expect(leaks(script)).toEqual([]);
    expect(leaks(JSON.stringify(reply))).toEqual([]);
    expect(script).toContain("name: n_[redacted]");
    expect(script).toContain('model "ft:[redacted]"');
    expect(script).toMatch(/token: "?\[redacted\]"?\n\s+path: a\.md/);
    expect(loadScriptText(script, "r.yaml").entryCount).toBe(1);
  });

  it("scrubs a non-JSON error body before clipping it, so a key across the clip leaves no prefix in the script or the client's error", async () => {
    const body = `${"x".repeat(1015)}${key} and more`;
    const { recorder, port } = await recorderBefore([[502, "text/plain", body]]);
    const err = await port.generate(userRequest("hi")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(leaks((err as Error).message)).toEqual([]);
    const script = recorder.scriptText();
    expect(leaks(script)).toEqual([]);
    expect(script).toContain("xxx[reda");
  });
});
