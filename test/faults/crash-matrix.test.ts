import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { equals, fromBinary, toJsonString } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  crashMatrix,
  EpisodeSchema,
  FaultKind,
  GenerateRequestSchema,
  type GenerateRequest,
  matrixPositions,
  Outcome,
  startServer,
  StreamBreak,
  type Episode,
  type MatrixKind,
  type MatrixPlan,
  type MatrixPosition,
  type ModelPort,
  type StubServer,
} from "../../src/index.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { runResearch, type ExecutorRun } from "./retrying-executor.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 15's proof: the whole single-fault crash matrix of a multi-step tool-using workflow,
 * run against a real executor with a retry policy (retrying-executor.ts) over real gRPC, on the
 * virtual clock. For each plan: the executor's outcome, and the episode the server recorded.
 *
 * What the policy makes of each kind (by status code, see retrying-executor.ts):
 *   unavailable (UNAVAILABLE), timeout (DEADLINE_EXCEEDED from the server), hang (cut off by the
 *   caller's deadline: on the virtual clock the server ends it at once) and break (1 chunk,
 *   then UNAVAILABLE): retried once, and the run ends as the clean run did;
 *   internal (INTERNAL), resource-exhausted (RESOURCE_EXHAUSTED) and drop (an RST_STREAM after 1
 *   chunk, which the client sees as INTERNAL): the executor gives up at that call, with that code.
 */

const script = readFileSync(new URL("./research.yaml", import.meta.url), "utf8");
const kinds: Exclude<MatrixKind, "crash">[] = ["unavailable", "internal", "resource-exhausted", "timeout", "hang", "break", "drop"];

/** The code the executor sees, whether it retries, and what the episode records, per kind. */
const expected: Record<Exclude<MatrixKind, "crash">, { code: number; retried: boolean; fault: FaultKind; outcome: Outcome; streamBreak?: StreamBreak }> = {
  unavailable: { code: 14, retried: true, fault: FaultKind.ERROR, outcome: Outcome.ERROR },
  internal: { code: 13, retried: false, fault: FaultKind.ERROR, outcome: Outcome.ERROR },
  "resource-exhausted": { code: 8, retried: false, fault: FaultKind.ERROR, outcome: Outcome.ERROR },
  timeout: { code: 4, retried: true, fault: FaultKind.TIMEOUT, outcome: Outcome.TIMED_OUT },
  hang: { code: 4, retried: true, fault: FaultKind.HANG, outcome: Outcome.DEADLINE_EXCEEDED },
  break: { code: 14, retried: true, fault: FaultKind.BREAK, outcome: Outcome.STREAM_BROKEN, streamBreak: StreamBreak.ERROR },
  drop: { code: 13, retried: false, fault: FaultKind.BREAK, outcome: Outcome.STREAM_BROKEN, streamBreak: StreamBreak.DROP },
};

let server: StubServer;
let port: ModelPort;
let control: ControlClient;
let clean: { run: ExecutorRun; episode: Episode };
let positions: MatrixPosition[];
let plans: MatrixPlan[];

/** Loads `plan` into `session` (a fresh episode), runs the executor there, fetches the episode's bytes. */
async function runPlan(plan: MatrixPlan, session: string) {
  // No 10 s deadline of the control client's: on a loaded machine the test's timeout bounds a hang.
  const o = { timeoutMs: 600_000 };
  const set = await control.call("SetFaultPlan", { session, plan: JSON.stringify(plan.plan), sourceName: `${plan.id}.json` }, o);
  const run = await runResearch(port, session);
  const got = await control.call("GetEpisode", { session, bytesOnly: true }, o);
  return { digest: set.plan?.digest, run, bytes: got.episodeBinpb };
}

beforeAll(async () => {
  server = await startServer({ script, clock: "virtual" });
  port = server.client();
  control = createControlClient(server.grpcAddress);
  const run = await runResearch(port, "clean");
  const bytes = (await control.call("GetEpisode", { session: "clean", bytesOnly: true })).episodeBinpb;
  clean = { run, episode: fromBinary(EpisodeSchema, bytes) };
  positions = matrixPositions(bytes);
  plans = crashMatrix(script, { episode: bytes, kinds });
});

afterAll(async () => {
  control?.close();
  await server?.close();
});

describe("the single-fault crash matrix against a retrying executor", () => {
  it("runs clean: 11 calls, 4 tools, an answer", () => {
    expect(clean.run.outcome).toEqual({ ok: true, answer: "Retry UNAVAILABLE and DEADLINE_EXCEEDED; give up on the rest (2 rules found)." });
    expect(clean.run.toolRuns.map((t) => t.split(" ")[0])).toEqual(["search", "fetch", "grep", "count"]);
    expect(clean.episode.calls.map((c) => c.stepId)).toEqual(["plan", "next", "act", "next", "act", "next", "act", "next", "act", "next", "answer"]);
    expect(clean.episode.faultPlan).toBeUndefined();
  });

  it(
    "gives each plan the outcome its kind calls for, and an episode that says why",
    async () => {
      // 6 streamed calls x 7 kinds + 5 unary calls x 5 kinds (break and drop need a stream).
      expect(plans.length).toBe(67);
      // grpc-js takes each call's caller stack (new Error().stack) for its error messages, and under
      // vitest every stack is source-mapped: a third of the matrix's time. The executor reports
      // statuses as data, so the matrix runs without stacks; they come back for the checks below.
      const stackTraceLimit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      const started = performance.now();
      try {
        await eachPlan(async (plan) => void firstRuns.set(plan.id, await runPlan(plan, plan.id)));
      } finally {
        Error.stackTraceLimit = stackTraceLimit;
      }
      const wallMs = performance.now() - started;
      // Reported, not bounded: the matrix's wall time is a figure of the machine's load.
      console.log(`crash matrix: ${plans.length} plans run in ${Math.round(wallMs)} ms of wall time`);
      const failures: string[] = [];
      for (const plan of plans) {
        try {
          checkPlan(plan, firstRuns.get(plan.id)!);
        } catch (err) {
          failures.push(`${plan.id}: ${(err as Error).message}`);
        }
      }
      expect(failures).toEqual([]);
    },
    testTimeoutMs(60_000),
  );

  it(
    "records the same episode bytes when a plan runs again in its session",
    async () => {
      expect(firstRuns.size).toBe(plans.length);
      const differ: string[] = [];
      await eachPlan(async (plan) => {
        // SetFaultPlan starts the session afresh: the same plan, the same calls, the same bytes.
        const again = await runPlan(plan, plan.id);
        const first = firstRuns.get(plan.id)!;
        if (!Buffer.from(again.bytes).equals(Buffer.from(first.bytes)) || JSON.stringify(again.run) !== JSON.stringify(first.run)) differ.push(plan.id);
      });
      expect(differ).toEqual([]);
    },
    testTimeoutMs(60_000),
  );
});

const firstRuns = new Map<string, Awaited<ReturnType<typeof runPlan>>>();

/** Runs `body` for every plan, four plans at a time, each in its own session (the plan's id). */
async function eachPlan(body: (plan: MatrixPlan) => Promise<void>): Promise<void> {
  const queue = [...plans];
  const worker = async () => {
    for (let plan = queue.shift(); plan; plan = queue.shift()) await body(plan);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

function checkPlan(plan: MatrixPlan, got: { digest: string | undefined; run: ExecutorRun; bytes: Uint8Array }): void {
  const rule = plan.plan.rules![0]!;
  const kind = kinds.find((k) => plan.id.startsWith(`${rule.at.step}.${rule.at.occurrence}.${k}-`))!;
  const want = expected[kind];
  const position = positions.find((p) => p.step === rule.at.step && p.occurrence === rule.at.occurrence)!;
  const at = position.call!; // the faulted call's sequence: the clean run's calls before it come first
  const episode = fromBinary(EpisodeSchema, got.bytes);
  const { outcome, attempts, toolRuns } = got.run;

  // The executor: retried once and ended as the clean run did, or gave up at the faulted call.
  const failed = attempts.filter((a) => a.code !== 0);
  expect(failed).toEqual([
    { step: position.step, occurrence: position.occurrence, attempt: 1, method: position.method, code: want.code, ...(want.retried ? { backoffMs: 100 } : {}) },
  ]);
  if (want.retried) {
    expect(outcome).toEqual(clean.run.outcome);
    expect(toolRuns).toEqual(clean.run.toolRuns);
  } else {
    expect(outcome).toEqual({ ok: false, code: want.code, step: position.step, occurrence: position.occurrence });
  }

  // The episode: the plan it ran under, and exactly one faulted call, at the planned position.
  expect(episode.faultPlan?.name).toBe(plan.id);
  expect(episode.faultPlan?.digest).toBe(got.digest);
  const faulted = episode.calls.filter((c) => c.fault !== undefined);
  expect(faulted.map((c) => [Number(c.sequence), c.stepId, c.fault!.rule, c.fault!.kind])).toEqual([[at, position.step, "rules[0]", want.fault]]);
  const call = faulted[0]!;
  expect(call.outcome).toBe(want.outcome);
  // A dropped stream ends with no status: the client's INTERNAL is its own reading of the reset.
  expect(call.status?.code).toBe(kind === "drop" ? undefined : want.code);
  if (want.streamBreak !== undefined) expect([call.streamBreak, call.chunksSent]).toEqual([want.streamBreak, 1]);
  expect(requestText(call.request!, plan.id)).toBe(requestText(clean.episode.calls[at - 1]!.request!, "clean"));
  if (want.retried) {
    // The fault took no entry: the retry got the answer the faulted call would have had, and
    // without the faulted call the script answered exactly as in the clean run.
    expect(episode.calls.length).toBe(clean.episode.calls.length + 1);
    const retry = episode.calls[at]!;
    expect(equals(GenerateRequestSchema, retry.request!, call.request!)).toBe(true);
    expect(call.entry === "" || call.entry === retry.entry).toBe(true);
    const answered = episode.calls.filter((c) => c !== call).map((c) => [c.stepId, c.entry, c.outcome]);
    expect(answered).toEqual(clean.episode.calls.map((c) => [c.stepId, c.entry, c.outcome]));
  } else {
    expect(episode.calls.length).toBe(at);
  }
}

/** A request as JSON, its tool call ids (`call-SESSION-SEQ-I`) freed of the session's name. */
function requestText(request: GenerateRequest, session: string): string {
  return toJsonString(GenerateRequestSchema, request).replaceAll(`call-${session}-`, "call-SESSION-");
}
