import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateStreamResponse } from "../../gen/modelstub/v1/model_pb.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { Code, type ModelPort } from "../../src/index.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import { userRequest } from "../support/requests.js";
import { repoRoot, runCli } from "../support/run-cli.js";
import { checkAfterBatch, codeName, startFuzzServer, type FuzzServer } from "./harness.js";
import { mutateScript } from "./mutate-script.js";
import { createRng, randomText, replay, scaled } from "./prng.js";
import { variedScript } from "./scripts.js";

/*
 * Batch 3: every script in examples/ and test/fixtures/bad-scripts/, mutated by seeded edits,
 * through `modelstub validate` (many files per run) and through LoadScript. validate exits 0
 * or 1 and prints no stack trace; LoadScript answers OK or INVALID_ARGUMENT, and OK exactly when
 * validate said ok; and a script that loaded answers a few calls without INTERNAL of its own.
 */

const scriptFile = /\.(ya?ml|json)$/;
/** Good scripts: most of their mutants still load, and those are what gets served. */
const goodSources = readdirSync(join(repoRoot, "examples"))
  .filter((f) => scriptFile.test(f))
  .map((f) => ({ path: join(repoRoot, "examples", f), text: readFileSync(join(repoRoot, "examples", f), "utf8") }));
goodSources.push({ path: "test/fuzz/scripts.ts (variedScript)", text: variedScript });
const badSources = readdirSync(join(repoRoot, "test/fixtures/bad-scripts"))
  .filter((f) => scriptFile.test(f))
  .map((f) => ({ path: join(repoRoot, "test/fixtures/bad-scripts", f), text: readFileSync(join(repoRoot, "test/fixtures/bad-scripts", f), "utf8") }));

interface Case {
  index: number;
  source: string;
  file: string;
  text: string;
}

/** Texts the script reacts to: its `contains` words and markers, and a few of its words. */
function probesOf(text: string): string[] {
  const found = [...text.matchAll(/contains"?:\s*"?([^"},\n]+)/g)].map((m) => m[1]!.trim());
  return [...found, "weather in Paris on Monday", "echo hi", "PROBE-ECHO hi", "fix it", ""];
}

describe("fuzz: mutated scripts", () => {
  let server: FuzzServer;
  let dir: string;
  const ports: ModelPort[] = [];
  beforeAll(async () => {
    server = await startFuzzServer(["--clock", "virtual"]);
    dir = mkdtempSync(join(tmpdir(), "modelstub-fuzz-"));
    for (let i = 0; i < 2; i++) ports.push(openGrpcPort(server.address));
  }, 60_000);
  afterAll(async () => {
    for (const p of ports) p.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("validates, loads and serves every mutated script without a crash or an INTERNAL of its own", async () => {
    const rng = createRng("mutated-scripts");
    const batches = 3;
    const perBatch = scaled(200);
    let index = 0;
    const tally = { validated: 0, ok: 0, loaded: 0, calls: 0, codes: new Map<string, number>() };
    for (let batch = 0; batch < batches; batch++) {
      const cases: Case[] = [];
      for (let i = 0; i < perBatch; i++) {
        // Every source in turn, good ones twice as often as bad ones.
        const k = index + i;
        const source = k % 3 === 2 ? badSources[Math.floor(k / 3) % badSources.length]! : goodSources[(k - Math.floor(k / 3)) % goodSources.length]!;
        const json = source.path.endsWith(".json");
        // Half the good ones get a single edit, so that many mutants load and are served.
        const text = mutateScript(rng, source.text, json, k % 3 !== 2 && rng.chance(0.5) ? 1 : 3);
        const file = join(dir, `case-${index + i}${json ? ".json" : ".yaml"}`);
        writeFileSync(file, text);
        cases.push({ index: index + i, source: source.path, file, text });
      }
      index += perBatch;

      // validate, 40 files a run.
      const okFiles = new Set<string>();
      for (let i = 0; i < cases.length; i += 40) {
        const group = cases.slice(i, i + 40);
        const r = await runCli(["validate", ...group.map((c) => c.file)], { timeoutMs: 60_000 });
        const what = `${replay("mutated-scripts", group[0]!.index)} to ${group.at(-1)!.index}: validate exited ${r.code}\n${r.stderr.slice(-3000)}`;
        expect([0, 1], what).toContain(r.code);
        expect(r.stderr, what).not.toMatch(/^\s+at /m);
        expect(r.stderr, what).not.toMatch(/internal error|TypeError|RangeError|ReferenceError|Maximum call stack/);
        for (const m of r.stdout.matchAll(/^(.*): ok \(/gm)) okFiles.add(m[1]!);
        tally.validated += group.length;
      }
      tally.ok += okFiles.size;

      // LoadScript and a few calls, 8 sessions at a time.
      for (let i = 0; i < cases.length; i += 8) {
        await Promise.all(
          cases.slice(i, i + 8).map(async (c, k) => {
            const session = `mut-${k}`;
            const name = `${replay("mutated-scripts", c.index)} (from ${c.source.replace(repoRoot, "")})`;
            let loaded = true;
            try {
              await server.control.call("LoadScript", { session, script: c.text, sourceName: c.file }, { timeoutMs: 20_000 });
            } catch (err) {
              loaded = false;
              const e = err as { code: number; details: string };
              expect(e.code, `${name}: LoadScript answered ${codeName(e.code)} ${e.details?.slice(0, 500)}`).toBe(Code.INVALID_ARGUMENT);
            }
            expect(loaded, `${name}: LoadScript ${loaded ? "loaded" : "refused"} it, validate ${okFiles.has(c.file) ? "said ok" : "refused it"}`).toBe(
              okFiles.has(c.file),
            );
            if (!loaded) return;
            tally.loaded++;
            // The script's lists: calls to each, with texts it reacts to.
            const steps = [...loadScriptText(c.text, c.file).lists.keys()];
            const probes = probesOf(c.text);
            // INTERNAL the script asked for: a status it scripts, or a `then: drop` (grpc-js reports the reset stream so).
            const scriptsInternal = /INTERNAL|\b13\b/.test(c.text);
            const scriptsDrop = /drop/.test(c.text);
            for (let n = 0; n < 4; n++) {
              const step = rng.pick(steps);
              const request = userRequest(rng.chance(0.7) ? rng.pick(probes) : randomText(rng, 30), {
                stepId: step,
                model: rng.pick(["", "test-model", "agent-stub"]),
              });
              const port = ports[n % ports.length]!;
              let code: number = Code.OK;
              let details = "";
              try {
                if (n % 2 === 0) await port.generate(request, { session, timeoutMs: 2000 });
                else for await (const _f of port.generateStream(request, { session, timeoutMs: 2000 }) as AsyncIterable<GenerateStreamResponse>);
              } catch (err) {
                ({ code, details } = err as { code: number; details: string });
              }
              tally.calls++;
              const key = codeName(code);
              tally.codes.set(key, (tally.codes.get(key) ?? 0) + 1);
              const what = `${name}: call ${n} (step ${JSON.stringify(step)}) answered ${key} ${JSON.stringify(details?.slice(0, 300))}`;
              expect(details ?? "", what).not.toMatch(/modelstub internal error/);
              if (code === Code.INTERNAL) expect(scriptsInternal || (scriptsDrop && /RST_STREAM/.test(details)), what).toBe(true);
            }
          }),
        );
      }
      await checkAfterBatch(server, `mutated-scripts batch ${batch}`);
    }
    console.log(
      `mutated scripts: ${tally.validated} validated (${tally.ok} ok), ${tally.loaded} loaded, ${tally.calls} calls: ${[...tally.codes].map(([k, n]) => `${k} ${n}`).join(", ")}`,
    );
  });
});
