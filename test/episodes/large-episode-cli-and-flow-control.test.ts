import { create, fromBinary, fromJsonString, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServiceError } from "@grpc/grpc-js";
import { readFile } from "node:fs/promises";
import { connect } from "node:http2";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ControlService, ExportEpisodeRequestSchema, ExportEpisodeResponseSchema, type ExportEpisodeResponse } from "../../gen/modelstub/v1/control_pb.js";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { Code } from "../../src/index.js";
import { controlServiceHandlers, exportChunkBytes } from "../../src/grpc/control-service.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { userRequest } from "../support/requests.js";
import { big, client, dir, exportEpisode, medium, plainClient, recordLargeEpisodes, runCliToFile, s, watchedServer } from "./large-episode-fixture.js";
import { testTimeoutMs } from "../support/test-timeout.js";

// The same describe as large-episode-fetch.test.ts: each file records its own episodes.
describe("fetching a 50 MB episode with a client at default limits", () => {
  recordLargeEpisodes();

  it(
    "modelstub episode --addr --out streams the 50 MB episode: the file holds its bytes and stdout its JSON",
    async () => {
      const out = join(dir, "big.binpb");
      const printed = join(dir, "big.json");
      const run = await runCliToFile(["episode", "--addr", s.address, "--session", "big", "--out", out], printed);
      expect(run).toEqual({ code: 0, stderr: "" });
      expect(Buffer.compare(await readFile(out), big)).toBe(0);
      expect(Buffer.compare(Buffer.from(toBinary(EpisodeSchema, fromJsonString(EpisodeSchema, await readFile(printed, "utf8")))), big)).toBe(0);
    },
    testTimeoutMs(30_000),
  );

  it("modelstub episode falls back to GetEpisode with bytes_only on a server without ExportEpisode", async () => {
    // A server from before ExportEpisode: grpc-js answers UNIMPLEMENTED for a method with no handler.
    const { ExportEpisode: _, ...older } = controlServiceHandlers(s.stub);
    const server = new Server();
    server.addService(serviceDefinition(ControlService), older);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    try {
      const out = join(dir, "medium.binpb");
      const run = await runCliToFile(["episode", "--addr", `127.0.0.1:${port}`, "--session", "medium", "--out", out], join(dir, "medium.json"));
      expect(run).toEqual({ code: 0, stderr: "" });
      expect(Buffer.compare(await readFile(out), medium)).toBe(0);
    } finally {
      server.forceShutdown();
    }
  });

  it("a cancelled export stops writing and removes its listeners from the call", async () => {
    const server = await watchedServer();
    const c = plainClient(server.address);
    try {
      const stream = exportEpisode(c, { session: "big" });
      const ended = new Promise<ServiceError>((resolve) => stream.on("error", resolve));
      stream.once("data", () => stream.cancel());
      expect((await ended).code).toBe(Code.CANCELLED);
      const [w] = server.watched;
      // The export waits on back-pressure once two chunks are unwritten; the cancel wakes it.
      await expect.poll(() => [w!.call.listenerCount("drain"), w!.call.listenerCount("cancelled")]).toEqual([w!.drain, w!.cancelled]);
      expect(w!.writes).toBeLessThan(Math.ceil(big.length / exportChunkBytes));
    } finally {
      c.close();
      server.close();
    }
  });

  it(
    "an export to a reader that stops reading holds at most two chunks, and finishes byte-equal once it reads again",
    async () => {
      // Waiting only for 'drain' let grpc-js take 16 chunks (16 MiB) before write() said false.
      const server = await watchedServer();
      const session = connect(`http://${server.address}`);
      session.on("error", () => {});
      try {
        const body = toBinary(ExportEpisodeRequestSchema, create(ExportEpisodeRequestSchema, { session: "big" }));
        const framed = Buffer.alloc(5 + body.length);
        framed.writeUInt32BE(body.length, 1);
        framed.set(body, 5);
        const stream = session.request({
          ":method": "POST",
          ":path": "/modelstub.v1.ControlService/ExportEpisode",
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.end(framed);
        // Never read until told: the stream's HTTP/2 window closes after 64 KiB and stays closed.
        stream.pause();
        await expect.poll(() => server.watched[0]?.writes ?? 0).toBeGreaterThan(0);
        // Let the writes settle: a count unchanged over 500 ms.
        let writes = -1;
        while (writes !== server.watched[0]!.writes) {
          writes = server.watched[0]!.writes;
          await new Promise((r) => setTimeout(r, 500));
        }
        // The first chunk goes, the second finds one unwritten and waits for both.
        expect(writes).toBeLessThanOrEqual(2);

        const data: Buffer[] = [];
        stream.on("data", (d: Buffer) => data.push(d));
        const trailers = new Promise<Record<string, unknown>>((resolve) => stream.on("trailers", resolve));
        stream.resume();
        await new Promise((resolve, reject) => stream.on("end", resolve).on("error", reject));
        expect((await trailers)["grpc-status"]).toBe("0");
        // The gRPC messages in the DATA received: 5-byte prefixes, then ExportEpisodeResponses.
        const all = Buffer.concat(data);
        const chunks: Uint8Array[] = [];
        for (let at = 0; at < all.length; ) {
          const length = all.readUInt32BE(at + 1);
          chunks.push(fromBinary(ExportEpisodeResponseSchema, all.subarray(at + 5, at + 5 + length)).chunk);
          at += 5 + length;
        }
        expect(chunks).toHaveLength(Math.ceil(big.length / exportChunkBytes));
        expect(server.watched[0]!.writes).toBe(chunks.length);
        expect(Buffer.compare(Buffer.concat(chunks), big)).toBe(0);
      } finally {
        session.destroy();
        server.close();
      }
    },
    testTimeoutMs(30_000),
  );

  it(
    "exports one snapshot: a call recorded while the chunks go out is not in them",
    async () => {
      const stream = exportEpisode(client, { session: "big" });
      const messages: ExportEpisodeResponse[] = [];
      let recorded: Promise<unknown> | undefined;
      stream.on("data", (m: ExportEpisodeResponse) => {
        messages.push(m);
        if (!recorded) {
          stream.pause();
          recorded = s.port.generate(userRequest("late"), { session: "big" }).then(() => stream.resume());
        }
      });
      await new Promise((resolve, reject) => stream.on("end", resolve).on("error", reject));
      await recorded;
      expect(s.stub.episodeBytes("big").length).toBeGreaterThan(big.length);
      expect([messages[0]!.totalBytes, messages[0]!.calls]).toEqual([big.length, 15]);
      expect(Buffer.compare(Buffer.concat(messages.map((m) => m.chunk)), big)).toBe(0);
    },
    testTimeoutMs(30_000),
  );
});
