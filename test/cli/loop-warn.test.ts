import { afterEach, describe, expect, it } from "vitest";
import { runCli, startServeProcess } from "../support/run-cli.js";

/*
 * `serve --loop-warn`: a log line for each second in which the event loop was held longer than
 * the threshold (issue 27, item 5), with its longest stretch of the loop's own work in CPU time.
 * The isolation check reads these lines with `--loop-warn 1ms` (test/fuzz/bystander.test.ts).
 */

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe("modelstub serve --loop-warn", () => {
  it("logs `event loop held` with the second's longest stall when it passes the threshold", async () => {
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--log-level", "warn", "--log-format", "json", "--loop-warn", "1ms"]);
    stops.push(() => s.child.kill("SIGKILL"));
    // Any second has a stall of at least a millisecond: the lines come once a second.
    await expect
      .poll(() =>
        /\{"level":"warn","msg":"event loop held","longest_ms":\d+,"longest_cpu_ms":\d+,("no_core_ms":\d+,)?"longest_gc_ms":\d+,"period_ms":1000\}/.test(
          s.output().stderr,
        ),
      )
      .toBe(true);
  });

  it("blames a server that was stopped, not working, for the wall time only: its CPU stretch stays short", async () => {
    const s = await startServeProcess(["--grpc", "127.0.0.1:0", "--log-level", "warn", "--log-format", "json", "--loop-warn", "1ms"]);
    stops.push(() => s.child.kill("SIGKILL"));
    const lines = () =>
      [...s.output().stderr.matchAll(/"msg":"event loop held","longest_ms":(\d+),"longest_cpu_ms":(\d+)/g)].map((m) => ({
        wallMs: Number(m[1]),
        cpuMs: Number(m[2]),
      }));
    // Past start-up: two lines logged, so the period of the pause is an idle server's.
    await expect.poll(() => lines().length).toBeGreaterThanOrEqual(2);
    const seen = lines().length;
    // An idle server stopped for 400 ms, as a machine with no core to spare would leave it.
    s.child.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, 400));
    s.child.kill("SIGCONT");
    await expect
      .poll(() =>
        lines()
          .slice(seen)
          .some((l) => l.wallMs >= 300),
      )
      .toBe(true);
    const paused = lines()
      .slice(seen)
      .find((l) => l.wallMs >= 300)!;
    expect(paused.cpuMs).toBeLessThan(50);
  });

  it("refuses a threshold that is not a duration", async () => {
    const r = await runCli(["serve", "--grpc", "127.0.0.1:0", "--loop-warn", "soon"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--loop-warn must be a duration like 100ms, or 0 for off, not "soon"');
  });
});
