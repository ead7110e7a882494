import { describe, expect, it } from "vitest";
import { Code } from "../../src/index.js";
import { exportChunkBytes } from "../../src/grpc/control-service.js";
import { getEpisodeMaxBytes } from "../../src/grpc/get-episode-answer.js";
import { startGrpcServer } from "../../src/grpc/start-grpc-server.js";
import { createControlClient } from "../../src/port/control-client.js";
import {
  bearer,
  big,
  client,
  collectMessages,
  defaultClientLimit,
  exportEpisode,
  getEpisode,
  medium,
  MiB,
  plainClient,
  recordLargeEpisodes,
  s,
} from "./large-episode-fixture.js";
import { testTimeoutMs } from "../support/test-timeout.js";

// The same describe as large-episode-cli-and-flow-control.test.ts: each file records its own episodes.
describe("fetching a 50 MB episode with a client at default limits", () => {
  recordLargeEpisodes();

  it("GetEpisode without bytes_only fails on a 3 MB episode: it carries the episode twice, past 4 MiB", async () => {
    expect(medium.length).toBeGreaterThan(3_000_000);
    expect(medium.length).toBeLessThan(defaultClientLimit);
    await expect(getEpisode(client, { session: "medium" })).rejects.toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
  });

  it("GetEpisode with bytes_only answers the same 3 MB episode within the limit, its bytes alone", async () => {
    const res = await getEpisode(client, { session: "medium", bytesOnly: true });
    expect(res.episode).toBeUndefined();
    expect(Buffer.compare(Buffer.from(res.episodeBinpb), medium)).toBe(0);
  });

  it("GetEpisode refuses the 50 MB episode, even bytes_only, RESOURCE_EXHAUSTED naming ExportEpisode: copying its answer into one frame would hold every session's calls", async () => {
    expect(big.length).toBeGreaterThan(getEpisodeMaxBytes);
    for (const bytesOnly of [false, true]) {
      // The server's own refusal, before it copies anything: not the client's receive limit.
      await expect(getEpisode(client, { session: "big", bytesOnly })).rejects.toMatchObject({
        code: Code.RESOURCE_EXHAUSTED,
        details: expect.stringMatching(
          /^the episode of session "big" is \d+ bytes \(\d+\.\d MiB\), and GetEpisode's answer.* over the 32\.0 MiB it answers at most: fetch it with ExportEpisode/,
        ),
      });
    }
  });

  it(
    "ExportEpisode streams the 50 MB episode in chunks of at most 1 MiB, byte-equal to what the server recorded",
    async () => {
      expect(big.length).toBeGreaterThan(50_000_000);
      const messages = await collectMessages(exportEpisode(client, { session: "big" }));
      expect(messages).toHaveLength(Math.ceil(big.length / exportChunkBytes));
      expect(messages.every((m) => m.chunk.length > 0 && m.chunk.length <= MiB)).toBe(true);
      // The first message announces the total and the calls; later ones carry bytes only.
      expect([messages[0]!.totalBytes, messages[0]!.calls]).toEqual([big.length, 15]);
      expect(messages.slice(1).every((m) => m.totalBytes === 0 && m.calls === 0)).toBe(true);
      expect(Buffer.compare(Buffer.concat(messages.map((m) => m.chunk)), big)).toBe(0);
    },
    testTimeoutMs(30_000),
  );

  it(
    "the control client's exportEpisode reassembles the 50 MB episode and counts its calls",
    async () => {
      const exported = await s.control.exportEpisode("big");
      expect(exported.calls).toBe(15);
      expect(Buffer.compare(Buffer.from(exported.bytes), big)).toBe(0);
    },
    testTimeoutMs(30_000),
  );

  it("ExportEpisode treats sessions as GetEpisode does: an unseen one is NOT_FOUND, or its empty episode with allow_missing; a bad name is INVALID_ARGUMENT", async () => {
    await expect(collectMessages(exportEpisode(client, { session: "nobody" }))).rejects.toMatchObject({ code: Code.NOT_FOUND });
    const [message, ...rest] = await collectMessages(exportEpisode(client, { session: "nobody", allowMissing: true }));
    expect(rest).toHaveLength(0);
    expect(Buffer.from(message!.chunk)).toEqual(Buffer.from((await getEpisode(client, { session: "nobody", allowMissing: true })).episodeBinpb));
    expect([message!.totalBytes, message!.calls]).toEqual([message!.chunk.length, 0]);
    await expect(collectMessages(exportEpisode(client, { session: "no/slashes" }))).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });

  it("the control token applies to ExportEpisode", async () => {
    const guarded = await startGrpcServer({ stub: s.stub, address: "127.0.0.1:0", controlToken: "secret" });
    const c = plainClient(guarded.address);
    try {
      await expect(collectMessages(exportEpisode(c, { session: "medium" }))).rejects.toMatchObject({
        code: Code.UNAUTHENTICATED,
        details: expect.stringContaining("authorization: Bearer"),
      });
      await expect(collectMessages(exportEpisode(c, { session: "medium" }, bearer("wrong")))).rejects.toMatchObject({
        code: Code.UNAUTHENTICATED,
        details: "wrong control token",
      });
      const control = createControlClient(guarded.address, { token: "secret" });
      try {
        expect(Buffer.compare(Buffer.from((await control.exportEpisode("medium")).bytes), medium)).toBe(0);
      } finally {
        control.close();
      }
    } finally {
      c.close();
      await guarded.close(1000);
    }
  });
});
