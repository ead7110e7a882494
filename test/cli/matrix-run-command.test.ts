import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role, startServer, type StubServer, type PlanReport } from "../../src/index.js";
import { cliPath, runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * `modelstub matrix run` and `modelstub session watch` as a user runs them: the built command in
 * a child process, the executor in another.
 */

const agent = fileURLToPath(new URL("../matrix/agent.yaml", import.meta.url));
const executor = fileURLToPath(new URL("../matrix/executor.mjs", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-matrix-run-"));
});

describe("modelstub matrix run", { timeout: testTimeoutMs(120_000) }, () => {
  it("exits 0 when every plan passes, and writes the JUnit and JSON lines reports and the episodes", async () => {
    const out = join(dir, "ok");
    const r = await runCli([
      "matrix",
      "run",
      agent,
      "--kinds",
      "unavailable,crash",
      "--jobs",
      "2",
      "--junit",
      join(out, "junit.xml"),
      "--jsonl",
      join(out, "plans.jsonl"),
      "--out",
      out,
      "--",
      process.execPath,
      executor,
    ]);
    expect(r.stderr).toMatch(/modelstub matrix run: 5 plans \(the clean run included\): 5 passed, 0 failed, 0 could not run/);
    expect(r.code).toBe(0);
    const lines = (await readFile(join(out, "plans.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as PlanReport);
    expect(lines.map((l) => [l.kind, l.verdict, l.restarts])).toEqual([
      ["clean", "pass", 0],
      ["single", "pass", 0],
      ["crash", "pass", 1],
      ["single", "pass", 0],
      ["crash", "pass", 1],
    ]);
    const episode = JSON.parse(await readFile(lines[2]!.episodePath!, "utf8")) as { fault_plan: { name: string } };
    expect(episode.fault_plan.name).toBe(lines[2]!.id);
    expect(await readFile(join(out, "junit.xml"), "utf8")).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="modelstub matrix run: matrix-agent" tests="5" failures="0" errors="0"/,
    );
  });

  it("exits 3 for a broken executor, printing each failed plan with its reason", async () => {
    const r = await runCli(["matrix", "run", agent, "--kinds", "internal", "--positions", "plan:1", "--", process.execPath, executor], {
      env: { BROKEN: "retry-all" },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /FAIL plan\.1\.internal-[0-9a-f]{8} {2}\(step "plan", 1st call: INTERNAL; exit 0\)\n {6}\[exit-code\] COMMAND ended with exit 0, expected a nonzero exit/,
    );
  });

  it("compares with golden episodes written by --update-golden", async () => {
    const golden = join(dir, "golden");
    const args = ["matrix", "run", agent, "--kinds", "unavailable", "--positions", "report:1", "--golden", golden];
    expect((await runCli([...args, "--update-golden", "--", process.execPath, executor])).code).toBe(0);
    expect((await runCli([...args, "--repeat", "2", "--", process.execPath, executor])).code).toBe(0);
    const broken = await runCli([...args, "--", process.execPath, executor], { env: { BROKEN: "random" } });
    expect(broken.code).toBe(3);
    expect(broken.stderr).toMatch(
      /\[golden\] the episode differs from the golden .*\n {8}golden vs this run: calls\[0\]\.request\.messages\[0\]\.content: "write the notes" != "write the notes \(0\.\d+\)"/,
    );
  });

  it("refuses a missing COMMAND and a bad --expect file before running anything", async () => {
    expect(await runCli(["matrix", "run", agent])).toMatchObject({ code: 1, stderr: expect.stringContaining("give the executor to run after --") });
    const bad = join(dir, "bad-expect.yaml");
    await writeFile(bad, "kinds:\n  unavailable: { exit: sometimes }\n");
    const r = await runCli(["matrix", "run", agent, "--expect", bad, "--", "true"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}: kinds.unavailable.exit:`);
  });

  it("runs a sample of --sample N plans after the clean run, the same for the same --seed", async () => {
    const args = (out: string) => [
      "matrix",
      "run",
      agent,
      "--kinds",
      "unavailable,internal,timeout",
      "--sample",
      "2",
      "--seed",
      "7",
      "--jsonl",
      join(out, "plans.jsonl"),
      "--out",
      out,
      "--",
      process.execPath,
      executor,
    ];
    const ids = async (out: string) =>
      (await readFile(join(out, "plans.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as PlanReport).id);
    const [a, b] = [join(dir, "sample-a"), join(dir, "sample-b")];
    expect((await runCli(args(a))).stderr).toMatch(/3 plans \(the clean run included\)/);
    await runCli(args(b));
    expect(await ids(b)).toEqual(await ids(a));
  });

  it("draws --chaos-seeds plans with the script's faults.chaos, or with --chaos-rates and --chaos-budget", async () => {
    const chaotic = join(dir, "chaotic.yaml");
    await writeFile(chaotic, `${await readFile(agent, "utf8")}\nfaults:\n  chaos: { seed: 1, rates: { error: 1 }, budget: 1 }\n`);
    /** Per chaos plan, the faults of its calls: [sequence, kind]. */
    const chaosFaults = async (out: string, ...extra: string[]) => {
      const r = await runCli([
        "matrix",
        "run",
        chaotic,
        "--kinds",
        "unavailable",
        "--positions",
        "plan:1",
        "--chaos-seeds",
        "4..5",
        ...extra,
        "--jsonl",
        join(out, "plans.jsonl"),
        "--out",
        out,
        "--",
        process.execPath,
        executor,
      ]);
      expect(r.code).toBe(0);
      const lines = (await readFile(join(out, "plans.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as PlanReport);
      return lines.filter((l) => l.kind === "chaos").map((l) => l.calls.filter((c) => c.fault).map((c) => [c.sequence, c.fault!.kind]));
    };
    // Every call draws an error, and the budget of 1 stops after the first.
    expect(await chaosFaults(join(dir, "chaos-script"))).toEqual([[[1, "FAULT_KIND_ERROR"]], [[1, "FAULT_KIND_ERROR"]]]);
    expect(await chaosFaults(join(dir, "chaos-rates"), "--chaos-rates", "timeout=1", "--chaos-budget", "2")).toEqual([
      [
        [1, "FAULT_KIND_TIMEOUT"],
        [2, "FAULT_KIND_TIMEOUT"],
      ],
      [
        [1, "FAULT_KIND_TIMEOUT"],
        [2, "FAULT_KIND_TIMEOUT"],
      ],
    ]);
  });

  it("refuses bad --chaos-rates, --sample and --seed with the fix", async () => {
    const refused = async (...args: string[]) => {
      const r = await runCli(["matrix", "run", agent, ...args, "--", "true"]);
      expect(r.code).toBe(1);
      return r.stderr;
    };
    expect(await refused("--chaos-rates", "error=0.2")).toContain("--chaos-rates and --chaos-budget go with --chaos-seeds A..B");
    expect(await refused("--chaos-seeds", "1..2", "--chaos-rates", "eror=0.2")).toContain('unknown kind "eror"; did you mean "error"?');
    expect(await refused("--chaos-seeds", "1..2", "--chaos-rates", "error=0.7,timeout=0.5")).toContain("the rates sum to 1.2, more than 1");
    expect(await refused("--chaos-seeds", "1..2", "--chaos-rates", "hang=0.1234567")).toContain(
      "hang=0.1234567 has more than 6 decimals (rates are counted in millionths): use 0.123457",
    );
    expect(await refused("--seed", "3")).toContain("--seed goes with --sample N");
    expect(await refused("--sample", "0")).toContain("--sample must be at least 1");
  });
});

describe("modelstub session watch", { timeout: testTimeoutMs(60_000) }, () => {
  let server: StubServer;
  beforeAll(async () => {
    server = await startServer({ script: "entries:\n  - reply: hi\n", clock: "virtual" });
  });
  afterAll(async () => {
    await server.close();
  });

  it("prints a session's call events as JSON lines until interrupted", async () => {
    const child = spawn(process.execPath, [cliPath, "session", "watch", "seen", "--addr", server.grpcAddress], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const exit = new Promise<number | null>((resolve) => child.on("close", resolve));
    // The command says when its watch is live: only then is the call sure to be seen.
    await new Promise<void>((resolve) => child.stderr.on("data", (b: Buffer) => ((stderr += b.toString()), stderr.includes("watching") && resolve())));
    const lines = new Promise<void>((resolve) =>
      child.stdout.on("data", (b: Buffer) => ((stdout += b.toString()), stdout.split("\n").length > 2 && resolve())),
    );
    await server.client().generate({ messages: [{ role: Role.USER, content: "hello" }] }, { session: "seen" });
    await lines;
    child.kill("SIGINT");
    expect(await exit).toBe(0);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => [e["kind"], e["sequence"], e["occurrence"]])).toEqual([
      ["WATCH_EVENT_KIND_CALL_STARTED", "1", 1],
      ["WATCH_EVENT_KIND_CALL_ENDED", "1", 1],
    ]);
    expect(events[1]).toMatchObject({ outcome: "OUTCOME_OK", entry: "entries[0]" });
  });
});
