import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { rawRequest, startHttpStub } from "./http-stub.js";

const chat: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: "m", messages: [{ role: "user", content: "go" }] };

describe("requests the HTTP front refuses", () => {
  it("answers the session cap with a 429 that says x-should-retry: false, so the SDK does not retry it", async () => {
    const h = await startHttpStub("entries: [{ reply: ok, repeat: true }]", { limits: { maxSessions: 1 } });
    try {
      await h.client({ session: "one" }).chat.completions.create(chat);
      const err = await h
        .client({ session: "two", maxRetries: 3 })
        .chat.completions.create(chat)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      const e = err as InstanceType<typeof OpenAI.RateLimitError>;
      expect(e.headers.get("x-should-retry")).toBe("false");
      expect(e.message).toContain("session limit reached: the server keeps at most 1 sessions (--max-sessions)");
      // One 429 and no retries: only a reset or a new server lifts the cap.
      expect(h.logs.map((l) => l.status)).toEqual([200, 429]);
    } finally {
      await h.close();
    }
  });

  it("says x-should-retry: false for the episode cap as well", async () => {
    const h = await startHttpStub("entries: [{ reply: ok, repeat: true }]", { limits: { maxEpisodeCalls: 1 } });
    try {
      await h.client({ session: "full" }).chat.completions.create(chat);
      const r = await rawRequest(h.base, "POST", "/v1/chat/completions", chat, { "x-modelstub-session": "full" });
      expect(r.status).toBe(429);
      expect(r.headers).toContainEqual(["x-should-retry", "false"]);
      expect(JSON.parse(String(r.body)).error.message).toContain("(--max-episode-calls)");
    } finally {
      await h.close();
    }
  });

  it("logs each refused request once, with outcome REFUSED, the status code and why", async () => {
    const h = await startHttpStub("entries: [{ reply: ok, repeat: true }]", { limits: { maxSessions: 1 } });
    try {
      const post = (body: string | object, session: string) => rawRequest(h.base, "POST", "/v1/chat/completions", body, { "x-modelstub-session": session });
      expect((await post(chat, "one")).status).toBe(200);
      expect((await post(chat, "bad name!")).status).toBe(400);
      expect((await post("{not json", "one")).status).toBe(400);
      expect((await post(chat, "two")).status).toBe(429);
      h.stub.drain();
      expect((await post(chat, "one")).status).toBe(503);
      await expect.poll(() => h.logs.length).toBe(5);
      expect(h.logs.map((l) => [l.session, l.status, l.entry, l.outcome, l.code])).toEqual([
        ["one", 200, "entries[0]", "OK", "OK"],
        ["bad name!", 400, "", "REFUSED", "INVALID_ARGUMENT"],
        ["one", 400, "", "REFUSED", "INVALID_ARGUMENT"],
        ["two", 429, "", "REFUSED", "RESOURCE_EXHAUSTED"],
        ["one", 503, "", "REFUSED", "UNAVAILABLE"],
      ]);
      expect(h.logs.map((l) => l.message)).toEqual([
        undefined,
        expect.stringContaining("invalid session name"),
        expect.stringContaining("JSON"),
        expect.stringContaining("session limit reached"),
        expect.stringContaining("shutting down"),
      ]);
    } finally {
      await h.close();
    }
  });
});
