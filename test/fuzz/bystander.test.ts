import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { checkAfterBatch } from "./harness.js";
import {
  echoedField,
  millionMessages,
  nested,
  repeatedControl,
  repeatedPost,
  stalledReaders,
  streamedEchoes,
  type Attack,
  type AttackReport,
} from "./attacks.js";
import { largeEpisodeFetches } from "./large-episode-fetches.js";
import {
  describeStalls,
  slowestCalls,
  loadedLoopStallBoundMs,
  loopStallBoundMs,
  loopStallsSince,
  p99SlackMs,
  prepareBystander,
  runBystander,
  sameBytes,
  startIsolationServer,
  watchRss,
  type IsolationServer,
} from "./bystander.js";

/*
 * Issue 27, items 5 and 6: one caller cannot stall or crash the others. Each attack runs against
 * a server (a child process) while a bystander session makes its fixed calls (bystander.ts):
 * unary and streamed gRPC and an HTTP chat completion, each with a declared latency. Measured in
 * the same test, a quiet run of the same calls comes first. Then:
 *
 * - the bystander's p99 is within 250 ms of the quiet run's, and every call answered right;
 * - its episode bytes (GetEpisode and ExportEpisode) are the quiet run's: the declared timeline
 *   makes them independent of load;
 * - the server's event loop never did more than 50 ms of work in one go, in its own CPU time (its
 *   `event loop held` log lines, `--loop-warn 1ms`: `longest_cpu_ms`; bystander.ts says why CPU
 *   time; 100 ms in the loaded CI step); the wall-time figure is reported beside it;
 * - its RSS grew at most the attack's bound meanwhile, and it did not exit;
 * - the attack's own promise held (a refusal, a clipped echo, stalled calls released);
 * - afterwards, checkAfterBatch: a good call answers, and RSS and fds are back within bounds.
 *
 * Every figure goes to the log as one `isolation:` line (docs/operations.md, "Isolation"). The
 * checks are soft, so a failing attack still reports all of them. A server that exited is
 * replaced before the next attack, so each attack's figures are its own.
 */

/**
 * Set by the loaded CI step (.ci/run.d/20-under-load.sh), which runs this file beside a busy loop
 * per core: every bound holds there as here, the loop's longest stretch within
 * loadedLoopStallBoundMs (bystander.ts says why), but beside the stalled readers, where that
 * stretch and the bystander's p99 are reported there, not bounded (below).
 */
const underLoad = process.env["MODELSTUB_ISOLATION_UNDER_LOAD"] === "1";

/** RSS growth bounds while an attack runs, in MB. Stalled or large streams: 16 MiB a stream (the regression test's bound). */
const streamsRssBoundMb = 64 * 16;
/** Anything else: a few requests of at most 8 MiB each. */
const requestsRssBoundMb = 512;

/** The attacks whose bystander p99 the loaded step reports and does not bound (see below). */
const stalledReadersPrefix = "64 stalled readers of ";
const largeEpisodeAttack = "a 60 MiB episode fetched: GetEpisode at 30 and 60 MiB (full, bytes_only), ExportEpisode x2";

const attacks: [string, Attack, number][] = [
  ["deep script x3: LoadScript of `entries: ` + 2000-deep brackets (4 KB)", repeatedControl("LoadScript", `entries: ${nested(2000)}`, 3), requestsRssBoundMb],
  ["deep script x3: LoadScript of 250,000-deep brackets (488 KB)", repeatedControl("LoadScript", nested(250_000), 3), requestsRssBoundMb],
  [
    "deep fault plan x3: SetFaultPlan of `rules: ` + 2000-deep brackets (4 KB)",
    repeatedControl("SetFaultPlan", `rules: ${nested(2000)}`, 3),
    requestsRssBoundMb,
  ],
  [
    "deep fault plan x3: SetFaultPlan of `rules: ` + 20,000-deep brackets (40 KB)",
    repeatedControl("SetFaultPlan", `rules: ${nested(20_000)}`, 3),
    requestsRssBoundMb,
  ],
  ["64 stalled readers of gRPC GenerateStream (960 KB echoes)", stalledReaders("grpc", 64), streamsRssBoundMb],
  ["64 stalled readers of chat completions SSE (960 KB echoes)", stalledReaders("chat", 64), streamsRssBoundMb],
  ["64 stalled readers of /v1/responses SSE (960 KB echoes)", stalledReaders("responses", 64), streamsRssBoundMb],
  ["64 stalled readers of /v1/messages SSE (960 KB echoes)", stalledReaders("messages", 64), streamsRssBoundMb],
  ["a 1.04M-message body x3 to chat completions (3.1 MB)", repeatedPost("chat", millionMessages("chat"), 3), requestsRssBoundMb],
  ["a 1.04M-message body x3 to /v1/responses (3.1 MB)", repeatedPost("responses", millionMessages("responses"), 3), requestsRssBoundMb],
  ["a 1.04M-message body x3 to /v1/messages (3.1 MB)", repeatedPost("messages", millionMessages("messages"), 3), requestsRssBoundMb],
  // gRPC clips an echoed value to about 0.5 KB; a 400 body carrying one so stays under 1 KB.
  ["a 3 MB echoed `role` x3 to chat completions", repeatedPost("chat", echoedField("chat"), 3, 1024), requestsRssBoundMb],
  ["a 3 MB echoed `type` x3 to /v1/responses", repeatedPost("responses", echoedField("responses"), 3, 1024), requestsRssBoundMb],
  ["a 3 MB echoed `role` x3 to /v1/messages", repeatedPost("messages", echoedField("messages"), 3, 1024), requestsRssBoundMb],
  ["64 large streamed echoes (960 KB each), read normally", streamedEchoes(64), streamsRssBoundMb],
  // Item 5: a fetch or export of a large episode yields, where it held the loop up to a second;
  // GetEpisode answers at most 32 MiB (grpc-js copies its answer into one frame at once).
  [largeEpisodeAttack, largeEpisodeFetches(2), requestsRssBoundMb],
];

describe("a bystander session during each attack", () => {
  let server: IsolationServer | undefined;
  beforeEach(async () => {
    if (server && server.exited() === undefined) return;
    await server?.close();
    server = await startIsolationServer();
  }, 60_000);
  afterAll(() => server?.close());

  it.each(attacks)("gets its answers in time and its episode unchanged, and the server holds: %s", async (name, attack, rssBoundMb) => {
    const s = server!;
    await prepareBystander(s);
    const quietStalls = await loopStallsSince(s);
    const quiet = await runBystander(s);
    const quietStallMs = await quietStalls();

    await prepareBystander(s);
    const stalls = await loopStallsSince(s);
    const stopRss = watchRss(s);
    let bystanderOver!: () => void;
    const bystanderDone = new Promise<void>((r) => (bystanderOver = r));
    const attacked = attack(s, bystanderDone).catch((err: unknown): AttackReport => ({ notes: [], failures: [`the attack threw: ${(err as Error).message}`] }));
    const during = await runBystander(s);
    bystanderOver();
    const report = await attacked;
    const rssPeakMb = stopRss();
    const stallMs = await stalls();
    const exited = s.exited();

    const sameEpisode = sameBytes(during.getEpisode, quiet.getEpisode) && sameBytes(during.exportEpisode, quiet.exportEpisode);
    console.log(
      `isolation: ${name}: bystander p99 quiet ${quiet.p99Ms.toFixed(0)} ms, during ${during.p99Ms.toFixed(0)} ms (${during.failures.length} of ${during.latenciesMs.length} calls failed; slowest ${slowestCalls(during)}); ` +
        `${underLoad ? "(under load) " : ""}loop's longest stretch quiet ${describeStalls(quietStallMs)}, during ${stallMs === undefined ? "(server exited)" : describeStalls(stallMs)}; RSS peak +${rssPeakMb.toFixed(0)} MB; ` +
        `episode ${sameEpisode ? "same" : "DIFFERS"}; server ${exited === undefined ? "up" : `EXITED ${exited}`}; attack: ${report.notes.join("; ")}` +
        (report.failures.length ? `; attack failures: ${report.failures.join("; ")}` : ""),
    );

    expect.soft(exited, `${name}: the server exited\n${s.output().stderr.slice(-2000)}`).toBeUndefined();
    expect.soft(report.failures, `${name}: the attack's own promise`).toEqual([]);
    expect.soft(quiet.failures, `${name}: the quiet run's calls`).toEqual([]);
    expect.soft(during.failures, `${name}: the bystander's calls during the attack`).toEqual([]);
    // Bounded in the loaded step too beside the episode fetch (GetEpisode answers at most 32 MiB:
    // grpc-js copied each 120 MB answer into one frame at once). Beside the 64 stalled readers
    // it is reported there, not bounded: a large stream now writes a slice of at most 4 ms per
    // turn (inWriteTurns), which brought the fuzz step's p99 to quiet + 72-120 ms beside them,
    // but under the busy loops it read quiet + 244-895 ms (docs/operations.md).
    if (!(underLoad && name.startsWith(stalledReadersPrefix)))
      expect
        .soft(during.p99Ms, `${name}: bystander p99 during the attack, quiet ${quiet.p99Ms.toFixed(0)} ms + ${p99SlackMs} ms`)
        .toBeLessThanOrEqual(quiet.p99Ms + p99SlackMs);
    expect.soft(during.fetchFailures, `${name}: fetching the bystander's episode`).toEqual([]);
    expect.soft(sameBytes(quiet.getEpisode, quiet.exportEpisode), `${name}: GetEpisode and ExportEpisode give the same bytes`).toBe(true);
    expect.soft(sameEpisode, `${name}: the bystander's episode bytes equal the quiet run's`).toBe(true);
    // In the loop's own CPU time: what a request holds, whatever the machine's load (bystander.ts).
    // Beside the stalled readers under the busy loops it is reported, not bounded: 27-97 ms there
    // (GC pauses of 15-142 ms in the same seconds; chat completions the worst).
    if (!(underLoad && name.startsWith(stalledReadersPrefix)))
      expect
        .soft(stallMs?.cpuMs, `${name}: the server's longest stretch of loop work during the attack, in CPU time`)
        .toBeLessThanOrEqual(underLoad ? loadedLoopStallBoundMs : loopStallBoundMs);
    expect.soft(rssPeakMb, `${name}: RSS growth during the attack, bound ${rssBoundMb} MB`).toBeLessThanOrEqual(rssBoundMb);
    // After the attack, every session deleted and the garbage collected: the server answers, its
    // fds are back, and its RSS is within the attack's bound of the warm baseline. Not the +100 MB
    // leak bound of the other fuzz batches: after 64 streams of 960 KB, V8 and malloc keep part of
    // the high-water mark (+175 MB, flat over the attacks that follow, so no leak); leaks are
    // what stalls-and-resets checks, batch after batch.
    if (exited === undefined) await checkAfterBatch(s, name, rssBoundMb);
  });
});
