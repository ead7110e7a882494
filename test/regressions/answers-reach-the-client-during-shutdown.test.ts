import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { startServeProcess } from "../support/run-cli.js";
import { dir, untilRunning, useScratchDir, watchHealth } from "../ops/serve-process-fixture.js";

useScratchDir();

// Under load in CI, a call in flight during a SIGTERM drain reached its client as CANCELLED: the
// drain waited for the engine's calls, then closed gRPC with no grace at all, and the forced
// close could cut an answer the engine had finished but the transport had not yet written. The
// rest of the grace now goes to the transport (a forced close only once it is over), and open
// health Watches end so they cannot hold the close for the whole grace. This pins that shape: a
// client that stops reading during the drain still gets both large answers whole, its Watch
// ends with OK, and the server exits 0. (The race itself needs a loaded machine to show.)
describe("a graceful shutdown", () => {
  it("delivers a large answer the engine finished during the drain, whole, and ends open health Watches", async () => {
    const script = join(dir, "large-answer.yaml");
    await writeFile(script, 'entries:\n  - latency: 1s\n    repeat: true\n    reply: "{{last_user}}"\n');
    const s = await startServeProcess(["--script", script, "--grpc", "127.0.0.1:0", "--grace", "60s"]);
    const port = openGrpcPort(s.address);
    const watch = watchHealth(s.address);
    // About 1 MB each way: the answer takes many HTTP/2 flow-control windows to write.
    const text = "x".repeat(1_000_000);
    try {
      const answers = [port.generate(userRequest(text), { session: "big" }), port.generate(userRequest(text), { session: "big" })];
      await untilRunning(s.address, "big", 2);
      s.child.kill("SIGTERM");
      // This process stops reading while the server finishes both calls (their 1 s latency runs
      // out meanwhile): HTTP/2 flow control then holds most of each answer on the server's side,
      // as a slow or busy client would. The drain sees the engine idle with the answers unwritten.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
      for (const answer of await Promise.all(answers)) expect(answer.message?.content.length).toBe(text.length);
      expect(await watch.ended).toBe("status 0");
    } finally {
      watch.close();
      port.close();
    }
    expect(await s.exit).toBe(0);
  });
});
