import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallMethod, EpisodeCallSchema, EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { runCli } from "../support/run-cli.js";

/*
 * `modelstub matrix` as a user runs it: the built CLI in its own process, on a script and an
 * episode the test writes to a temporary folder.
 */

let dir: string;
let script: string;
let episodeFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "modelstub-matrix-"));
  script = join(dir, "agent.yaml");
  await writeFile(script, "name: agent\nentries:\n  - reply: hello\nsteps:\n  plan:\n    - reply: first\n      times: 2\n  act:\n    - reply: done\n");
  episodeFile = join(dir, "clean.binpb");
  const call = (sequence: number, stepId: string, method: CallMethod) =>
    create(EpisodeCallSchema, { sequence: BigInt(sequence), stepId, method, session: "s" });
  await writeFile(
    episodeFile,
    toBinary(
      EpisodeSchema,
      create(EpisodeSchema, {
        session: "s",
        calls: [call(1, "plan", CallMethod.GENERATE), call(2, "act", CallMethod.GENERATE_STREAM), call(3, "plan", CallMethod.GENERATE)],
      }),
    ),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; name: string; plan: Record<string, unknown> });

describe("modelstub matrix", () => {
  it("prints the count on stderr, then one JSON line per plan with id, name and plan in that order, the plan's keys sorted", async () => {
    const r = await runCli(["matrix", script]);
    expect(r.stderr).toBe("modelstub matrix: 8 plans (4 positions x 2 kinds)\n");
    expect(r.code).toBe(0);
    const first = r.stdout.split("\n")[0]!;
    expect(first).toMatch(
      /^\{"id":"main\.1\.unavailable-[0-9a-f]{8}","name":"main list, 1st call: UNAVAILABLE","plan":\{"name":"main\.1\.unavailable-[0-9a-f]{8}","rules":\[\{"at":\{"occurrence":1,"step":""\},"error":\{"code":"UNAVAILABLE","message":"crash matrix: UNAVAILABLE at main list, 1st call"\}\}\],"version":1\}\}$/,
    );
    expect(lines(r.stdout).map((l) => l.name)).toEqual([
      "main list, 1st call: UNAVAILABLE",
      "main list, 1st call: timeout",
      'step "plan", 1st call: UNAVAILABLE',
      'step "plan", 1st call: timeout',
      'step "plan", 2nd call: UNAVAILABLE',
      'step "plan", 2nd call: timeout',
      'step "act", 1st call: UNAVAILABLE',
      'step "act", 1st call: timeout',
    ]);
  });

  it("prints the same ids on every run", async () => {
    const [a, b] = await Promise.all([runCli(["matrix", script]), runCli(["matrix", script])]);
    expect(a.stdout).toBe(b.stdout);
  });

  it("takes the positions of a clean run's .binpb episode, with break only at its streamed call", async () => {
    const r = await runCli(["matrix", script, "--from-episode", episodeFile, "--kinds", "break,hang"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("modelstub matrix: 4 plans (3 positions x 2 kinds; break and drop only at streamed calls)\n");
    expect(lines(r.stdout).map((l) => l.name)).toEqual([
      'step "plan", 1st call: hang',
      'step "act", 1st call: stream broken after 1 chunk, then UNAVAILABLE',
      'step "act", 1st call: hang',
      'step "plan", 2nd call: hang',
    ]);
  });

  it("picks --positions among the calls of --from-episode, which give their methods", async () => {
    const r = await runCli(["matrix", script, "--from-episode", episodeFile, "--positions", "act:1,plan:2", "--kinds", "break"]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).map((l) => l.name)).toEqual(['step "act", 1st call: stream broken after 1 chunk, then UNAVAILABLE']);
    const missing = await runCli(["matrix", script, "--from-episode", episodeFile, "--positions", "plan:3"]);
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'modelstub matrix: --positions with --from-episode: the episode has no call plan:3: it made 2 calls on step "plan"\n',
    });
  });

  it("with --clean-positions, counts occurrences on the clean run's calls (count: clean)", async () => {
    const r = await runCli(["matrix", script, "--positions", "plan:1-2", "--kinds", "unavailable", "--pairs", "--clean-positions"]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)[0]!.plan["rules"]).toEqual([
      { at: { count: "clean", occurrence: 1, step: "plan" }, error: { code: "UNAVAILABLE", message: 'crash matrix: UNAVAILABLE at step "plan", 1st call' } },
      { at: { count: "clean", occurrence: 2, step: "plan" }, error: { code: "UNAVAILABLE", message: 'crash matrix: UNAVAILABLE at step "plan", 2nd call' } },
    ]);
  });

  it("takes positions from --positions and counts the pairs first", async () => {
    const r = await runCli(["matrix", script, "--positions", "plan:1-2,:1", "--kinds", "timeout,internal", "--pairs"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("modelstub matrix: 12 plans (pairs of 3 positions, 2 kinds each)\n");
    const plans = lines(r.stdout);
    expect(plans).toHaveLength(12);
    expect(plans[0]!.id).toMatch(/^plan\.1\.timeout\+plan\.2\.timeout-[0-9a-f]{8}$/);
    expect(plans[0]!.plan["rules"]).toEqual([
      { at: { occurrence: 1, step: "plan" }, timeout: true },
      { at: { occurrence: 2, step: "plan" }, timeout: true },
    ]);
  });

  it("with --out, also writes each plan as DIR/<id>.json, pretty, creating DIR", async () => {
    const out = join(dir, "plans", "nested");
    const r = await runCli(["matrix", script, "--positions", "act:1", "--out", out]);
    expect(r.code).toBe(0);
    const printed = lines(r.stdout);
    expect((await readdir(out)).sort()).toEqual(printed.map((p) => `${p.id}.json`).sort());
    for (const p of printed) expect(await readFile(join(out, `${p.id}.json`), "utf8")).toBe(`${JSON.stringify(p.plan, null, 2)}\n`);
  });

  it("exits 1 on an invalid script, printing its problems as validate does and no plan", async () => {
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "entries:\n  - repy: hi\n");
    const r = await runCli(["matrix", bad]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: `${bad}:2:5: entries[0]: unknown key \`repy\` (hint: did you mean \`reply\`?)\n` });
  });

  it.each([
    [["--kinds", "unavailabel"], 'modelstub matrix: --kinds: unknown kind "unavailabel"; did you mean "unavailable"?'],
    [["--positions", "plan"], 'modelstub matrix: --positions: position 1 of 1 ("plan") has no occurrence'],
    [["--positions", "plna:1"], 'modelstub matrix: the script "agent" has no step "plna"'],
    [["--from-episode", "/nonexistent/clean.binpb"], "modelstub matrix: cannot read the episode /nonexistent/clean.binpb"],
  ])("exits 1 on bad arguments %j, saying what is wrong", async (args, message) => {
    const r = await runCli(["matrix", script, ...args]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.startsWith(message)).toBe(true);
  });

  it("lists its options with --help, and is named in the top-level help", async () => {
    const help = await runCli(["matrix", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of ["--from-episode FILE", "--positions SPEC", "--kinds LIST", "--pairs", "--out DIR"]) expect(help.stdout).toContain(`  ${flag}`);
    expect((await runCli(["--help"])).stdout).toMatch(/^ {2}matrix {2,}print a script's crash matrix/m);
  });
});
