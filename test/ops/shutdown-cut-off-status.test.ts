import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { create, fromBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ClientReadableStream, type ServiceError } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { GenerateStreamRequestSchema, ModelService, type GenerateRequest, type GenerateStreamRequest } from "../../gen/modelstub/v1/model_pb.js";
import { shutdownStatus } from "../../src/engine/drain-then-cut-off.js";
import { serviceDefinition } from "../../src/grpc/service-definition.js";
import { Code, codeName } from "../../src/shared/status-code.js";
import { userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { dir, untilRunning, useScratchDir } from "./serve-process-fixture.js";

/*
 * Issue 28, item 1: a call the grace period cut off used to end by the connection closing under
 * it, and the client read that as CANCELLED, or UNAVAILABLE ("GOAWAY received") on one call per
 * channel, by timing, while its episode said "cancelled by the client". Now the server ends each
 * such call itself, before any connection closes, with one status: UNAVAILABLE, and the episode
 * records that same status for every call, unary and streamed, on every connection.
 */

useScratchDir();

type ModelClient = Client & {
  Generate(req: GenerateRequest, md: Metadata, cb: (err: ServiceError | null) => void): unknown;
  GenerateStream(req: GenerateStreamRequest, md: Metadata): ClientReadableStream<unknown>;
};
const ModelClientCtor = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");

const channels = 8;
const unaryPerChannel = 10;
const streamsPerChannel = 10;

/** How one call ended, as its client saw it. */
interface Seen {
  code: number;
  details: string;
  frames: number;
}

describe("a call cut off by the shutdown's grace period", () => {
  it(`ends with UNAVAILABLE on every one of ${channels} connections, unary and streamed, and its episode records that same status`, async () => {
    const script = join(dir, "cut-off.yaml");
    await writeFile(
      script,
      "steps:\n  hang: [ { hang: true, repeat: true } ]\n  stream: [ { latency: { per_chunk: 10m }, reply: 'alpha beta gamma', repeat: true } ]\n",
    );
    const recordDir = join(dir, "episodes");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "200ms"]);
    // One connection each: a local subchannel pool keeps grpc-js from sharing one between clients.
    const clients = Array.from(
      { length: channels },
      () => new ModelClientCtor(s.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }) as unknown as ModelClient,
    );
    const seen: Promise<Seen>[] = [];
    try {
      clients.forEach((client, c) => {
        const md = (step: string) => {
          const m = new Metadata();
          m.set("x-modelstub-session", `c${c}`);
          m.set("x-modelstub-step", step);
          return m;
        };
        for (let i = 0; i < unaryPerChannel; i++) {
          seen.push(
            new Promise((resolve) =>
              client.Generate(userRequest("x"), md("hang"), (err) => resolve({ code: err?.code ?? Code.OK, details: err?.details ?? "", frames: 0 })),
            ),
          );
        }
        for (let i = 0; i < streamsPerChannel; i++) {
          const call = client.GenerateStream(create(GenerateStreamRequestSchema, { messages: userRequest("x").messages }), md("stream"));
          let frames = 0;
          call.on("data", () => frames++);
          seen.push(
            new Promise((resolve) => {
              call.on("error", (err: ServiceError) => resolve({ code: err.code, details: err.details, frames }));
              call.on("end", () => resolve({ code: Code.OK, details: "", frames }));
            }),
          );
        }
      });
      for (let c = 0; c < channels; c++) await untilRunning(s.address, `c${c}`, unaryPerChannel + streamsPerChannel);
      s.child.kill("SIGTERM");
      const ended = await Promise.all(seen);
      const statuses = countBy(ended.map((e) => `${codeName(e.code)}: ${e.details}`));
      expect(statuses).toEqual({ [`UNAVAILABLE: ${shutdownStatus.message}`]: channels * (unaryPerChannel + streamsPerChannel) });
      // The streams got the chunk their script sent before the cut.
      expect(ended.filter((_, i) => i % (unaryPerChannel + streamsPerChannel) >= unaryPerChannel).every((e) => e.frames === 1)).toBe(true);
    } finally {
      for (const client of clients) client.close();
    }
    expect(await s.exit).toBe(0);
    for (let c = 0; c < channels; c++) {
      const episode = fromBinary(EpisodeSchema, await readFile(join(recordDir, `c${c}.episode.binpb`)));
      expect(countBy(episode.calls.map((call) => `${Outcome[call.outcome]} ${codeName(call.status?.code ?? 0)}: ${call.status?.message}`))).toEqual({
        [`CANCELLED UNAVAILABLE: ${shutdownStatus.message}`]: unaryPerChannel + streamsPerChannel,
      });
      expect(episode.calls.filter((call) => call.stepId === "stream").map((call) => call.chunksSent)).toEqual(Array(streamsPerChannel).fill(1));
    }
    expect(s.output().stderr).toContain(`"msg":"calls cut off","calls":${channels * (unaryPerChannel + streamsPerChannel)},"code":"UNAVAILABLE"`);
  });

  it("is answered over HTTP with 503 and the same message, a stream and a whole reply alike (before: the socket closed)", async () => {
    const script = join(dir, "cut-off-http.yaml");
    await writeFile(script, "steps:\n  hang: [ { hang: true, repeat: true } ]\n");
    const recordDir = join(dir, "episodes-http");
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "200ms"]);
    // The HTTP line follows the gRPC one startServeProcess waited for.
    await expect.poll(() => /HTTP listening(?: on |","url":")([^\s"]+)/.exec(s.output().stderr)?.[1]).toBeDefined();
    const http = /HTTP listening(?: on |","url":")([^\s"]+)/.exec(s.output().stderr)![1]!;
    const call = (stream: boolean) =>
      fetch(`${http}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-modelstub-session": "h", "x-modelstub-step": "hang" },
        body: JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "x" }] }),
      }).then(
        async (r) => [r.status, ((await r.json()) as { error?: { message?: string } }).error?.message],
        (e: Error) => ["failed", e.message],
      );
    const answers = [call(false), call(true)];
    await untilRunning(s.address, "h", 2);
    s.child.kill("SIGTERM");
    expect(await Promise.all(answers)).toEqual([
      [503, shutdownStatus.message],
      [503, shutdownStatus.message],
    ]);
    expect(await s.exit).toBe(0);
    const episode = fromBinary(EpisodeSchema, await readFile(join(recordDir, "h.episode.binpb")));
    expect(episode.calls.map((c) => [Outcome[c.outcome], c.status?.code, c.status?.message])).toEqual(
      Array(2).fill(["CANCELLED", Code.UNAVAILABLE, shutdownStatus.message]),
    );
  });
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
