import { Code } from "../../src/index.js";
import { create, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { constants, type ClientHttp2Stream } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema, GenerateStreamRequestSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { userRequest } from "../support/requests.js";
import { checkAfterBatch, codeName, grpcFrame, rawSession, rssMb, running, startFuzzServer, type FuzzServer } from "./harness.js";
import { createRng, replay, scaled } from "./prng.js";

/*
 * Batches 4 and 5, on a server with the real clock: GenerateStream calls of large echoes whose
 * readers never read, then cancel (memory back within bound, `running` back to 0); and bursts
 * of calls cancelled right after they start or cut by short deadlines on several channels,
 * staying under 1,000 resets per connection (Node 20's nghttp2 limit: docs/operations.md "Safety when
 * exposed"). After each, the good call.
 */

/** While streams stall, the server's RSS may grow at most this much (16 streams of <= 500 KB echoes). */
const stalledBoundMb = 512;

describe("fuzz: stalled readers and reset bursts", () => {
  let server: FuzzServer;
  beforeAll(async () => {
    server = await startFuzzServer([]);
  }, 60_000);
  afterAll(() => server?.close());

  it("holds stalled GenerateStream readers in bounded memory and lets them all go on cancel", async () => {
    const rng = createRng("stalled-readers");
    // MODELSTUB_FUZZ_ROUNDS scales the batches, not their size: the +150 MB bound after a batch
    // is for 16 streams of up to 500 KB.
    const batches = scaled(2);
    const streamsPerBatch = 16;
    let index = 0;
    for (let batch = 0; batch < batches; batch++) {
      const session = rawSession(server.address);
      const streams: ClientHttp2Stream[] = [];
      /** How each stream stands, for the failure message. */
      const ended: string[] = [];
      const first = index;
      let peak = 0;
      for (let i = 0; i < streamsPerBatch; i++, index++) {
        // 250 to 500 KB of words echoed back: several times the 64 KiB the stream's window and
        // the server's buffer let through (test/regressions/stalled-readers.test.ts has 960 KB).
        const words = rng.range(50_000, 100_000);
        const body = toBinary(
          GenerateStreamRequestSchema,
          create(GenerateStreamRequestSchema, { messages: [{ role: Role.USER, content: `PROBE-ECHO ${"word ".repeat(words)}` }] }),
        );
        const s = session.request({
          ":method": "POST",
          ":path": "/modelstub.v1.ModelService/GenerateStream",
          "content-type": "application/grpc",
          te: "trailers",
          "x-modelstub-session": "stalled",
        });
        const k = i;
        s.on("error", () => {});
        s.on("response", (h) => (ended[k] = `answered ${h[":status"]}${h["grpc-status"] ? ` grpc-status ${h["grpc-status"]}` : ""}`));
        s.on("close", () => (ended[k] = `closed (rst code ${s.rstCode}) after ${ended[k] ?? "no answer"}`));
        s.end(grpcFrame(body));
        s.pause();
        streams.push(s);
      }
      const what = `${replay("stalled-readers", first)} to ${index - 1}`;
      const end = Date.now() + 60_000;
      while ((await running(server.control, "stalled")) < streamsPerBatch && Date.now() < end) {
        peak = Math.max(peak, rssMb(server.pid) - server.baseRssMb);
        await new Promise((r) => setTimeout(r, 200));
      }
      peak = Math.max(peak, rssMb(server.pid) - server.baseRssMb);
      expect(await running(server.control, "stalled"), `${what}: calls held by their readers; streams: ${JSON.stringify(ended)}`).toBe(streamsPerBatch);
      expect(peak, `${what}: RSS growth while stalled, bound ${stalledBoundMb} MB`).toBeLessThan(stalledBoundMb);
      // Another caller is served meanwhile.
      const reply = await server.good.generate(userRequest("PROBE-ECHO bystander"), { session: "bystander", timeoutMs: 10_000 });
      expect(reply.message?.content, what).toBe("PROBE-ECHO ok: PROBE-ECHO bystander");

      for (const s of streams) s.close(constants.NGHTTP2_CANCEL);
      const released = Date.now() + 15_000;
      while ((await running(server.control, "stalled")) > 0 && Date.now() < released) await new Promise((r) => setTimeout(r, 100));
      expect(await running(server.control, "stalled"), `${what}: calls still running after the cancels`).toBe(0);
      session.destroy();
      const after = await checkAfterBatch(server, `stalled-readers batch ${batch}`);
      console.log(
        `stalled readers batch ${batch}: ${streamsPerBatch} streams, RSS +${peak.toFixed(0)} MB at most while stalled; after: RSS ${after.rssMb.toFixed(0)} MB (base ${server.baseRssMb.toFixed(0)}), ${after.fds} fds (base ${server.baseFds})`,
      );
    }
  });

  it("ends every call of a reset burst CANCELLED, DEADLINE_EXCEEDED or OK, and keeps serving", async () => {
    const rng = createRng("reset-bursts");
    // MODELSTUB_FUZZ_ROUNDS scales the batches: each uses new channels, so no connection sees
    // more than its 200 resets, far under nghttp2's 1,000 on Node 20.
    const batches = scaled(2);
    const channels = 4;
    const callsPerChannel = 200;
    const pass = (b: Buffer) => b;
    const codes = new Map<string, number>();
    let index = 0;
    for (let batch = 0; batch < batches; batch++) {
      // Distinct options: a channel (and connection) of its own for each client.
      const clients = Array.from(
        { length: channels },
        (_, i) => new Client(server.address, credentials.createInsecure(), { "fuzz.channel": `${batch}-${i}` } as never),
      );
      const calls: Promise<void>[] = [];
      for (let c = 0; c < channels; c++) {
        for (let i = 0; i < callsPerChannel; i++) {
          const n = index++;
          const kind = rng.pick(["cancel", "cancel-later", "deadline"] as const);
          const stream = rng.chance(0.5);
          const text = rng.pick(["PROBE-SLOW", "PROBE-SLOW", "PROBE-ECHO quick", "PROBE-PWD"]);
          const md = new Metadata();
          md.set("x-modelstub-session", `burst-${c}`);
          const options = kind === "deadline" ? { deadline: Date.now() + rng.range(1, 60) } : {};
          const bytes = Buffer.from(
            stream
              ? toBinary(GenerateStreamRequestSchema, create(GenerateStreamRequestSchema, { messages: [{ role: Role.USER, content: text }] }))
              : toBinary(GenerateRequestSchema, userRequest(text)),
          );
          const delay = rng.range(0, 30);
          calls.push(
            new Promise<number>((resolve) => {
              const done = (err: ServiceError | null) => resolve(err?.code ?? Code.OK);
              let call: { cancel(): void };
              if (stream) {
                const s = clients[c]!.makeServerStreamRequest("/modelstub.v1.ModelService/GenerateStream", pass, pass, bytes, md, options);
                s.on("data", () => {});
                s.on("error", (err: ServiceError) => done(err));
                s.on("end", () => done(null));
                call = s;
              } else call = clients[c]!.makeUnaryRequest("/modelstub.v1.ModelService/Generate", pass, pass, bytes, md, options, (err) => done(err));
              if (kind === "cancel") call.cancel();
              else if (kind === "cancel-later") setTimeout(() => call.cancel(), delay);
            }).then((code) => {
              const key = `${kind} ${stream ? "GenerateStream" : "Generate"}: ${codeName(code)}`;
              codes.set(key, (codes.get(key) ?? 0) + 1);
              expect([Code.OK, Code.CANCELLED, Code.DEADLINE_EXCEEDED], `${replay("reset-bursts", n)}: ${key}`).toContain(code);
            }),
          );
        }
      }
      await Promise.all(calls);
      const end = Date.now() + 15_000;
      const runningNow = async () =>
        (await Promise.all(Array.from({ length: channels }, (_, c) => running(server.control, `burst-${c}`)))).reduce((a, b) => a + b, 0);
      while ((await runningNow()) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      expect(await runningNow(), `reset-bursts batch ${batch}: calls still running`).toBe(0);
      for (const c of clients) c.close();
      await checkAfterBatch(server, `reset-bursts batch ${batch}`);
    }
    console.log(
      `reset bursts: ${index} calls on ${channels * batches} channels; statuses:\n${[...codes]
        .sort()
        .map(([k, n]) => `  ${k}: ${n}`)
        .join("\n")}`,
    );
  });
});
