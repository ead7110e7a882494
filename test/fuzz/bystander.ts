// Longer than 250 lines because it is the bystander of every attack: its calls, its quiet run,
// its run beside an attack, and what must hold (timing, episode bytes, the server's RSS).
import { userRequest } from "../support/requests.js";
import { rssMb, startFuzzServer, type FuzzServer } from "./harness.js";

/*
 * The bystander of the isolation checks (bystander.test.ts): one well-behaved session that makes
 * a fixed list of calls, with declared latency, while another caller attacks the same server.
 * Its answers must come as fast as on a quiet server (p99 within `p99SlackMs` of the quiet run's),
 * and its episode bytes must be the quiet run's: the declared timeline makes them independent of
 * load, so any difference is the attack reaching into another session.
 */

/** How much later than on the quiet run the bystander's p99 may be (issue 27, item 6). */
export const p99SlackMs = 250;
/**
 * The longest stretch of work the server's loop may do in one go during an attack, in its own
 * CPU time (issue 27, item 5: "about 50 ms"): the `longest_cpu_ms` of its `event loop held` lines
 * (src/cli/start-loop-report.ts). No request's work holds it longer: a heavy request is split into
 * turns (src/shared/heavy-turns.ts), and so is a large stream's writing. CPU time, not wall time,
 * because the machine is shared: wall time between two turns of the loop also counts the time the
 * server waited for a core while this test's own clients, other processes or the loaded step's
 * busy loops ran (a quiet run showed 198 ms so), and that is the scheduler's, not a request's. A
 * real block is still seen whole (test/cli/loop-cpu-meter.test.ts: 80 ms of work reads 60 or more).
 */
export const loopStallBoundMs = 50;
/**
 * The same bound in the loaded CI step (busy loops on every core). A stretch counts the loop
 * thread's garbage-collection pauses, and with the cores busy V8's helper threads mark less of the
 * heap concurrently, so the main thread does more of it in its pauses: one pause took 39 ms of CPU
 * beside the 64 stalled chat completions readers. Beside the stalled readers under the busy loops
 * the stretch is reported, not bounded (bystander.test.ts); the other attacks measured 2-26 ms.
 */
export const loadedLoopStallBoundMs = 100;

/** The bystander's script: every answer waits a declared 60 ms, and streams 10 ms a word after that. */
export const bystanderScript = `entries:
  - name: bystander
    repeat: true
    latency: { first_byte: 60ms, per_chunk: 10ms }
    reply: "bystander answer to {{last_user}}: one two three four five"
`;
export const bystanderSession = "bystander";
/** Rounds of a run: each a unary and a streamed gRPC call and an HTTP chat completion. */
const rounds = 4;
/** A bystander call that takes longer than this has failed (the issue saw calls hit 30 s). */
const callTimeoutMs = 30_000;

/** A server for isolation checks: gRPC and HTTP, and a log line for each second the loop was held. */
export interface IsolationServer extends FuzzServer {
  /** http://HOST:PORT of the HTTP front. */
  http: string;
}

/**
 * Starts `modelstub serve` with the HTTP front, its log at warn in JSON, and `--loop-warn 1ms`:
 * a line for every second, whatever its longest stall (loopStallsSince reads them). Requests of
 * up to 8 MiB: a 960 KB echo of control characters is 5.8 MB of JSON.
 */
export async function startIsolationServer(): Promise<IsolationServer> {
  const server = await startFuzzServer([
    "--http",
    "127.0.0.1:0",
    "--log-level",
    "warn",
    "--log-format",
    "json",
    "--loop-warn",
    "1ms",
    "--max-message-bytes",
    "8388608",
  ]);
  let http: string | undefined;
  // The HTTP line follows the gRPC one, which startFuzzServer waited for.
  for (let i = 0; i < 200 && !http; i++) {
    http = /HTTP listening(?: on |","url":")([^\s"]+)/.exec(server.output().stderr)?.[1];
    if (!http) await new Promise((r) => setTimeout(r, 25));
  }
  if (!http) throw new Error(`the server did not say where HTTP listens:\n${server.output().stderr}`);
  return { ...server, http };
}

/** What one bystander run measured. */
export interface BystanderRun {
  /** Each call's time from send to its whole answer, in ms, in call order. */
  latenciesMs: number[];
  /** Calls that failed or answered wrong, with what they got. */
  failures: string[];
  p99Ms: number;
  /** The episode's bytes by GetEpisode (bytes_only) and by ExportEpisode; undefined when the fetch failed. */
  getEpisode?: Uint8Array;
  exportEpisode?: Uint8Array;
  /** Why a fetch failed. */
  fetchFailures: string[];
}

/** The p-th percentile (nearest rank) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Starts the bystander's session afresh on its script, so each run's episode starts alike. */
export async function prepareBystander(server: IsolationServer): Promise<void> {
  await server.control.call("DeleteSession", { session: bystanderSession }, { timeoutMs: 30_000 }).catch(() => undefined);
  await server.control.call("LoadScript", { session: bystanderSession, script: bystanderScript, sourceName: "bystander.yaml" }, { timeoutMs: 30_000 });
}

async function timed(what: string, latencies: number[], failures: string[], call: () => Promise<string>, expected: string): Promise<void> {
  const started = performance.now();
  let got: string;
  try {
    got = await call();
  } catch (err) {
    got = `error: ${(err as Error).message ?? String(err)}`;
  }
  latencies.push(performance.now() - started);
  if (got !== expected) failures.push(`${what}: ${got.slice(0, 300)}`);
}

/**
 * The bystander's calls, one after another (a prepared session: prepareBystander), then its
 * episode fetched both ways. Never throws: what failed is in the result.
 */
export async function runBystander(server: IsolationServer): Promise<BystanderRun> {
  const latenciesMs: number[] = [];
  const failures: string[] = [];
  const session = bystanderSession;
  const answer = (text: string) => `bystander answer to ${text}: one two three four five`;
  for (let r = 0; r < rounds; r++) {
    await timed(
      `unary ${r}`,
      latenciesMs,
      failures,
      async () => (await server.good.generate(userRequest(`unary ${r}`), { session, timeoutMs: callTimeoutMs })).message?.content ?? "",
      answer(`unary ${r}`),
    );
    await timed(
      `stream ${r}`,
      latenciesMs,
      failures,
      async () => {
        let text = "";
        for await (const f of server.good.generateStream(userRequest(`stream ${r}`), { session, timeoutMs: callTimeoutMs }))
          if (f.frame.case === "textDelta") text += f.frame.value;
        return text;
      },
      answer(`stream ${r}`),
    );
    await timed(
      `http ${r}`,
      latenciesMs,
      failures,
      async () => {
        const res = await fetch(new URL("/v1/chat/completions", server.http), {
          method: "POST",
          headers: { "content-type": "application/json", "x-modelstub-session": session },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: `http ${r}` }] }),
          signal: AbortSignal.timeout(callTimeoutMs),
        });
        const body = await res.text();
        if (res.status !== 200) return `HTTP ${res.status} ${body}`;
        return (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      },
      answer(`http ${r}`),
    );
  }
  const fetchFailures: string[] = [];
  let getEpisode: Uint8Array | undefined;
  let exportEpisode: Uint8Array | undefined;
  try {
    getEpisode = (await server.control.call("GetEpisode", { session, bytesOnly: true }, { timeoutMs: callTimeoutMs })).episodeBinpb;
  } catch (err) {
    fetchFailures.push(`GetEpisode: ${(err as Error).message}`);
  }
  try {
    exportEpisode = (await server.control.exportEpisode(session, { timeoutMs: callTimeoutMs })).bytes;
  } catch (err) {
    fetchFailures.push(`ExportEpisode: ${(err as Error).message}`);
  }
  return { latenciesMs, failures, p99Ms: percentile(latenciesMs, 99), getEpisode, exportEpisode, fetchFailures };
}

/** The run's three slowest calls, "http 2 412 ms, ...": where the time went. */
export function slowestCalls(run: BystanderRun): string {
  const kinds = ["unary", "stream", "http"];
  return run.latenciesMs
    .map((ms, i) => ({ ms, what: `${kinds[i % 3]} ${Math.floor(i / 3)}` }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3)
    .map((c) => `${c.what} ${c.ms.toFixed(0)} ms`)
    .join(", ");
}

/** Whether two byte arrays are equal (undefined equals nothing). */
export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a !== undefined && b !== undefined && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

/** The longest loop stalls of a stretch of the server's log, in ms. */
export interface LoopStalls {
  /** The longest the loop was late in wall time: what callers waited, time without a core included. */
  wallMs: number;
  /** The longest stretch of the loop's own work, in its CPU time: what the bound is on. */
  cpuMs: number;
  /** Time the loop waited for a core, summed over the stretch. */
  noCoreMs: number;
  /** The longest garbage-collection pause (wall time). */
  gcMs: number;
}

/**
 * Marks where the server's log stands; the function returned waits for the period running at
 * its call to be logged, then gives the longest stalls of the `event loop held` lines since the
 * mark (0 when there were none), or undefined when the server has exited.
 */
export async function loopStallsSince(server: IsolationServer): Promise<() => Promise<LoopStalls | undefined>> {
  // The period running now began before the mark: wait for its line, so what came before (a
  // warm-up, the last run's fetches) is not counted.
  await nextLoopLine(server, server.output().stderr.length);
  const from = server.output().stderr.length;
  const longest = (): LoopStalls => {
    const stalls = { wallMs: 0, cpuMs: 0, noCoreMs: 0, gcMs: 0 };
    for (const m of server
      .output()
      .stderr.slice(from)
      .matchAll(/"msg":"event loop held","longest_ms":(\d+),"longest_cpu_ms":(\d+)(?:,"no_core_ms":(\d+))?,"longest_gc_ms":(\d+)/g)) {
      stalls.wallMs = Math.max(stalls.wallMs, Number(m[1]));
      stalls.cpuMs = Math.max(stalls.cpuMs, Number(m[2]));
      stalls.noCoreMs += Number(m[3] ?? 0);
      stalls.gcMs = Math.max(stalls.gcMs, Number(m[4]));
    }
    return stalls;
  };
  return async () => {
    // The period running now is part of the window: wait for its line.
    await nextLoopLine(server, server.output().stderr.length);
    return server.exited() === undefined ? longest() : undefined;
  };
}

/** "C ms of CPU (wall W ms, no core N ms, longest GC pause G ms)", or "?" */
export function describeStalls(s: LoopStalls | undefined): string {
  return s === undefined ? "?" : `${s.cpuMs} ms of CPU (wall ${s.wallMs} ms, no core ${s.noCoreMs} ms, longest GC pause ${s.gcMs} ms)`;
}

/** Waits for an `event loop held` line after offset `from` of the log (a period and a half at most: a second with no stall has none). */
async function nextLoopLine(server: IsolationServer, from: number): Promise<void> {
  const end = performance.now() + 1500;
  while (!server.output().stderr.slice(from).includes('"msg":"event loop held"') && performance.now() < end && server.exited() === undefined)
    await new Promise((r) => setTimeout(r, 50));
}

/** Samples the server's RSS every 100 ms; the function returned stops and gives the largest growth over its baseline, in MB. */
export function watchRss(server: IsolationServer): () => number {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, rssMb(server.pid) - server.baseRssMb);
    } catch {
      // The process is gone: its exit is checked on its own.
    }
  };
  sample();
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}
