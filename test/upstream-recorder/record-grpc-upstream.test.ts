import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { Code, ModelCallError, startServer, type ModelPort, type PortCallOptions } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { createGrpcUpstream } from "../../src/upstream-recorder/grpc-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { driveScenario, scenarioScript } from "../support/determinism-scenario.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/** A port that also notes what the client saw of each call: the response, the frames, or the status. */
function seeing(port: ModelPort): { port: ModelPort; seen: unknown[] } {
  const seen: unknown[] = [];
  // The transport's own trailers (date, content-type) and who noticed a deadline first (the
  // client's timer or the server) are not what the model said: they are left out.
  const failed = (err: unknown) =>
    err instanceof ModelCallError
      ? {
          code: err.code,
          details: err.code === Code.DEADLINE_EXCEEDED && !err.details.startsWith("scripted") ? "deadline" : err.details,
          trailers: err.trailers.filter(([k]) => k !== "date" && k !== "content-type"),
        }
      : { other: String(err) };
  return {
    seen,
    port: {
      async generate(r: GenerateRequest, o?: PortCallOptions) {
        try {
          const res = await port.generate(r, o);
          seen.push({ response: res });
          return res;
        } catch (err) {
          seen.push({ error: failed(err) });
          throw err;
        }
      },
      async *generateStream(r: GenerateRequest, o?: PortCallOptions) {
        const frames: unknown[] = [];
        try {
          for await (const f of port.generateStream(r, o)) {
            frames.push(f);
            yield f;
          }
          seen.push({ frames });
        } catch (err) {
          seen.push({ frames, error: failed(err) });
          throw err;
        }
      },
      listModels: (o?: PortCallOptions) => port.listModels(o),
      close: () => port.close(),
    },
  };
}

/** Drives the determinism scenario through `address` over gRPC; returns what the client saw. */
async function drive(address: string): Promise<unknown[]> {
  const { port, seen } = seeing(openGrpcPort(address));
  try {
    await driveScenario(port, "scenario", { hangDeadlineMs: 300 });
  } finally {
    port.close();
  }
  return seen;
}

describe("modelstub record in front of a gRPC ModelService (a second modelstub)", { timeout: testTimeoutMs(60_000) }, () => {
  it("records the determinism scenario (tools, a stream, an error with trailers, a timeout, a hang) and replays it to what the client saw", async () => {
    const upstreamServer = await startServer({ script: scenarioScript, clock: "virtual" });
    const recorder = await startRecorder({ upstream: createGrpcUpstream(upstreamServer.grpcAddress), keepChunks: true });
    let recorded: unknown[];
    try {
      recorded = await drive(recorder.grpcAddress);
    } finally {
      await recorder.close();
      await upstreamServer.close();
    }
    const script = recorder.scriptText();
    expect(script).toContain("-> grpc://");
    expect(script).toMatch(/flaky:\n(.*\n)*?\s+- error:\n\s+code: UNAVAILABLE\n\s+message: overloaded, try again\n\s+trailers: \{ retry-after-ms: "5" \}/);
    expect(script).toMatch(/slow:\n(.*\n)*?\s+- timeout: true/);
    expect(script).toMatch(/stuck:\n(.*\n)*?\s+- hang: true/);

    const replays: Uint8Array[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startServer({ script, clock: "virtual" });
      try {
        expect(await drive(server.grpcAddress)).toEqual(recorded);
        // The last call was cut off client-side; wait until the server has recorded it.
        await expect.poll(() => server.control.episode("scenario").calls.length).toBe(7);
        replays.push(server.control.episodeBytes("scenario"));
      } finally {
        await server.close();
      }
    }
    expect(Buffer.from(replays[1]!).equals(Buffer.from(replays[0]!))).toBe(true);
    const made = scriptFromEpisode(fromBinary(EpisodeSchema, replays[0]!), "scenario.episode.binpb");
    expect(made.problems).toEqual([]);
  });
});
