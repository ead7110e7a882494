import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { createStub } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startHttpServer } from "../../src/http/start-http-server.js";
import { rawRequest, startHttpStub } from "./http-stub.js";

const chat = { model: "m", messages: [{ role: "user", content: "go" }] };

describe("the HTTP front's lifecycle", () => {
  it("cancels a real-clock stream when the client goes away mid-SSE, and stops its timers", async () => {
    const h = await startHttpStub("entries: [{ latency: { per_chunk: 60m }, reply: 'slow words here' }]", { clock: "real" });
    try {
      const firstBytes = await new Promise<string>((resolve, reject) => {
        const req = request(new URL("/v1/chat/completions", h.base), { method: "POST", agent: false }, (res) => {
          res.once("data", (d: Buffer) => {
            resolve(String(d));
            req.destroy();
          });
        });
        req.on("error", () => {});
        req.once("error", reject);
        req.end(JSON.stringify({ ...chat, stream: true }));
      });
      expect(firstBytes).toContain('"role":"assistant"');
      await expect.poll(() => h.stub.episode("default").calls.map((c) => c.outcome)).toEqual([Outcome.CANCELLED]);
      await expect.poll(() => h.logs.map((l) => l.status)).toEqual([499]);
      expect(h.stub.inFlight()).toBe(0);
    } finally {
      // Nothing is left behind to hold the close up: with an hour's grace (and an hour per
      // chunk), a close that waited on the call would outlast the test.
      await h.server.close(3_600_000);
    }
  });

  it("cuts a request that hangs when the server closes, after the grace, and records it cancelled", async () => {
    const h = await startHttpStub("entries: [{ hang: true }]");
    const pending = rawRequest(h.base, "POST", "/v1/chat/completions", chat);
    await expect.poll(() => h.stub.sessions().length).toBe(1);
    await h.server.close(50);
    expect((await pending).error).toBeDefined();
    expect(h.stub.episode("default").calls.map((c) => c.outcome)).toEqual([Outcome.CANCELLED]);
    expect(h.stub.inFlight()).toBe(0);
  });

  it("rejects a busy address", async () => {
    const stub = createStub({ script: loadScriptText("entries: [{ reply: ok }]", "t.yaml") });
    const first = await startHttpServer({ stub, address: "127.0.0.1:0", log: () => {} });
    try {
      await expect(startHttpServer({ stub, address: first.address, log: () => {} })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it("answers 413 to a body past the limit", async () => {
    const stub = createStub({ script: loadScriptText("entries: [{ reply: ok }]", "t.yaml") });
    const server = await startHttpServer({ stub, address: "127.0.0.1:0", log: () => {}, maxBodyBytes: 100 });
    try {
      const r = await rawRequest(`http://${server.address}`, "POST", "/v1/chat/completions", { ...chat, padding: "x".repeat(200) });
      expect(r.status).toBe(413);
      expect(JSON.parse(String(r.body)).error.code).toBe("request_too_large");
    } finally {
      await server.close();
    }
  });
});
