import { fromBinary } from "@bufbuild/protobuf";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { goldenPath } from "../support/determinism-scenario.js";
import { replayEpisode } from "../support/replay-episode.js";
import { userRequest } from "../support/requests.js";
import { runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

describe("modelstub script from-episode", { timeout: testTimeoutMs(60_000) }, () => {
  it("writes a script that, served and replayed, records the golden episode's very bytes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-from-episode-"));
    const out = join(dir, "scenario.yaml");
    const run = await runCli(["script", "from-episode", goldenPath, "--out", out, "--strict"]);
    expect(run.stderr).toContain("reproduced exactly");
    expect(run.code).toBe(0);
    expect((await runCli(["validate", out])).code).toBe(0);
    const golden = await readFile(goldenPath);
    const episode = fromBinary(EpisodeSchema, golden);
    const stub = createStub({ script: loadScriptText(await readFile(out, "utf8"), out), clock: createVirtualClock() });
    // The last call of the scenario is a hang its caller cut off after 100 ms.
    await replayEpisode(stub, episode, { 7: 100 });
    expect(Buffer.from(stub.episodeBytes(episode.session)).equals(golden)).toBe(true);
  });

  it("prints the script on stdout, says on stderr what it cannot reproduce, and exits 1 for that with --strict", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-from-episode-"));
    const stub = createStub({
      script: loadScriptText('entries:\n  - repeat: true\n    reply: "echo: {{last_user}}"\n', "t.yaml"),
      clock: createVirtualClock(),
    });
    await createInProcessPort(stub).generate(userRequest("{{x}}"), { session: "t" });
    const file = join(dir, "t.episode.binpb");
    await writeFile(file, stub.episodeBytes("t"));
    const loose = await runCli(["script", "from-episode", file]);
    expect(loose.code).toBe(0);
    expect(loose.stdout).toContain("# not exact: the reply text cannot be written");
    expect(loose.stderr).toMatch(/^modelstub script: not exact: call 1: the reply text cannot be written/m);
    expect((await runCli(["script", "from-episode", file, "--strict"])).code).toBe(1);
  });

  it("notes a fault plan's strikes as such, not as misses, and that a planned timeout's message will read as a scripted one's", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-from-episode-"));
    const plan =
      "entries:\n  - repeat: true\n    reply: ok\nfaults:\n  rules:\n    - { at: { call: 1 }, error: { code: UNAVAILABLE } }\n    - { at: { call: 2 }, timeout: true }\n";
    const stub = createStub({ script: loadScriptText(plan, "f.yaml"), clock: createVirtualClock() });
    for (const n of [1, 2, 3])
      await createInProcessPort(stub)
        .generate(userRequest(`call ${n}`), { session: "f" })
        .catch(() => undefined);
    const file = join(dir, "f.episode.binpb");
    await writeFile(file, stub.episodeBytes("f"));
    const run = await runCli(["script", "from-episode", file]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("a miss");
    expect(run.stdout).toMatch(/# not exact: a fault plan's rules\[1\] struck this call/);
    expect(run.stdout).toMatch(
      /# not exact: the plan's timeout said "timeout injected by the fault plan \(rules\[1\]\)"; the replay's will say "scripted timeout at" the entry/,
    );
    expect((await runCli(["script", "from-episode", file, "--strict"])).code).toBe(1);
  });

  it("lists a script past the 512 KiB limit as not exact, so --strict exits 1, and names the --out file a write failed on, not its temp file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-from-episode-"));
    const stub = createStub({ script: loadScriptText('entries:\n  - repeat: true\n    reply: "{{last_user}}"\n', "t.yaml"), clock: createVirtualClock() });
    for (const word of ["one", "two", "three"]) await createInProcessPort(stub).generate(userRequest(`${word} `.repeat(50_000)), { session: "t" });
    const file = join(dir, "big.episode.binpb");
    await writeFile(file, stub.episodeBytes("t"));
    const big = await runCli(["script", "from-episode", file, "--out", join(dir, "big.yaml"), "--strict"]);
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(
      /^modelstub script: not exact: the script is \d+ bytes, over the 524288 \(512 KiB\) a script may hold: serve and validate refuse it$/m,
    );
    const missing = join(dir, "gone", "t.yaml");
    const unwritable = await runCli(["script", "from-episode", file, "--out", missing]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toContain(`modelstub script: cannot write ${missing}: ENOENT: no such file or directory\n`);
    expect(unwritable.stderr).not.toContain(".tmp");
  });

  it("refuses bad arguments with exit 2 and an unreadable episode with exit 1", async () => {
    expect((await runCli(["script", "from-epsode", "x"])).code).toBe(2);
    expect((await runCli(["script", "from-episode"])).code).toBe(2);
    const missing = await runCli(["script", "from-episode", "/nonexistent/e.binpb"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read the episode /nonexistent/e.binpb");
  });
});
