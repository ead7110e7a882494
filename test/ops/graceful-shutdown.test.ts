import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { Code } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { dir, untilRunning, useScratchDir } from "./serve-process-fixture.js";

useScratchDir();

describe("graceful shutdown", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("on %s cuts calls still running at the grace deadline, writes whole episodes, and exits 0", async (signal) => {
    const script = join(dir, "hang.yaml");
    await writeFile(script, "steps:\n  hang: [ { hang: true, repeat: true } ]\n  ok: [ { reply: done, repeat: true } ]\n");
    const recordDir = join(dir, `episodes-${signal}`);
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--record-dir", recordDir, "--grace", "300ms"]);
    const port = openGrpcPort(s.address);
    const outcomes: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < 5; i++) await port.generate(userRequest("x"), { session: `s${i}`, step: "ok" });
      for (let i = 0; i < 5; i++)
        outcomes.push(
          port.generate(userRequest("x"), { session: `s${i}`, step: "hang" }).then(
            () => "ok",
            (e: { code: number }) => e.code,
          ),
        );
      for (let i = 0; i < 5; i++) await untilRunning(s.address, `s${i}`, 1);
      s.child.kill(signal);
      // Cut at the grace deadline: the server ends each call with UNAVAILABLE, never a scripted answer.
      expect(await Promise.all(outcomes)).toEqual(Array(5).fill(Code.UNAVAILABLE));
    } finally {
      port.close();
    }
    expect(await s.exit).toBe(0);
    const files = (await readdir(recordDir)).filter((f) => f.endsWith(".binpb")).sort();
    expect(files).toEqual(["s0.episode.binpb", "s1.episode.binpb", "s2.episode.binpb", "s3.episode.binpb", "s4.episode.binpb"]);
    for (const f of files) {
      const ep = fromBinary(EpisodeSchema, await readFile(join(recordDir, f)));
      expect(ep.calls.map((c) => c.outcome)).toEqual([Outcome.OK, Outcome.CANCELLED]);
    }
    expect(s.output().stderr).toContain(`"msg":"shutting down","signal":"${signal}"`);
    expect(s.output().stderr).toContain('"msg":"grace period over: cutting off calls in flight"');
  });
});
