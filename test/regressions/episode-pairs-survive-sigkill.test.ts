import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary, fromJsonString, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { repoRoot } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 28, item 3: an episode's `.binpb` and `.json` were renamed into place one after the
 * other, so a SIGKILL between the two renames left a pair that disagreed (a `.binpb` with no
 * `.json`, or a `.binpb` of the new episode beside the `.json` of the one before). Now the pair
 * changes in one rename (write-episode-file.ts). A child server writes episodes of four sessions
 * as fast as it can (resets, each closing an episode with 1 to 5 calls) into one record
 * directory and is SIGKILLed mid-write, 100 times; the next child starts on what the last one
 * left, as a restarted server would. After every kill, every pair must be whole and agree.
 */

const kills = 100;
const sessions = ["a", "b", "c", "d"];

// The child: the library's server, the same engine and recorder `modelstub serve` runs. It says
// "writing" once its first episodes are on disk, then goes on until it is killed.
const child = `
const { startServer } = await import(${JSON.stringify(join(repoRoot, "dist/src/index.js"))});
const server = await startServer({ clock: "virtual", recordDir: process.argv[1], script: "entries:\\n  - reply: hi\\n    repeat: true\\n" });
const port = server.inProcess();
const sessions = ${JSON.stringify(sessions)};
for (let round = 0; ; round++) {
  await Promise.all(sessions.map(async (session, i) => {
    for (let c = 0; c <= (round + i) % 5; c++) await port.generate({ messages: [{ role: 1, content: "x" }] }, { session });
    await server.control.reset(session);
  }));
  if (round === 0) process.stdout.write("writing\\n");
}
`;

/** Kills run in lanes, side by side, each on a record directory of its own. */
const lanes = 4;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "modelstub-sigkill-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** Starts a child writing into `dir`, waits until it writes, then SIGKILLs it `afterMs` later. */
async function killDuringWrites(dir: string, afterMs: number): Promise<void> {
  const p = spawn(process.execPath, ["--input-type=module", "-e", child, dir], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  p.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<string | null>((resolve) => p.on("exit", (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    p.stdout.on("data", (d: Buffer) => d.toString().includes("writing") && resolve());
    p.on("exit", (code) => reject(new Error(`the writer exited ${code} before writing: ${err}`)));
  });
  if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
  p.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

/** What a reader finds under one session's names: both files from one episode, or neither. */
async function pairOf(dir: string, session: string): Promise<string> {
  const read = (ext: string) =>
    readFile(join(dir, `${session}.episode.${ext}`)).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e)));
  const [binpb, json] = await Promise.all([read("binpb"), read("json")]);
  if (!binpb && !json) return "none";
  if (!binpb || !json) return `only .${binpb ? "binpb" : "json"}`;
  const fromJson = toBinary(EpisodeSchema, fromJsonString(EpisodeSchema, json.toString("utf8")));
  const calls = fromBinary(EpisodeSchema, binpb).calls.length;
  return Buffer.from(fromJson).equals(binpb)
    ? `agree (${calls} calls)`
    : `disagree (.binpb ${calls} calls, .json ${JSON.parse(json.toString("utf8")).calls?.length ?? 0} calls)`;
}

describe("an episode's .binpb and .json, after a SIGKILL during writes", () => {
  it(
    `agree for every session after each of ${kills} kills, and a restart leaves no write's leftovers`,
    async () => {
      const found: string[] = [];
      const dirs = Array.from({ length: lanes }, (_, l) => join(root, `lane-${l}`));
      await Promise.all(
        dirs.map(async (dir, l) => {
          for (let k = l; k < kills; k += lanes) {
            // Spread over the writes: at once, and up to 19 ms into them.
            await killDuringWrites(dir, k % 20);
            for (const s of sessions) found.push(await pairOf(dir, s));
          }
        }),
      );
      const disagreeing = found.filter((f) => !f.startsWith("agree"));
      expect(disagreeing, `${disagreeing.length} of ${found.length} pairs`).toEqual([]);
      // A start cleans what the last kill left: each session's link and the folder it names remain.
      const { startServer } = await import("../../src/index.js");
      for (const dir of dirs) {
        const server = await startServer({ recordDir: dir });
        await server.close();
        const store = join(dir, ".episodes");
        const named = await Promise.all(sessions.map((s) => readlink(join(store, s))));
        expect((await readdir(store)).sort()).toEqual([...sessions, ...named].sort());
      }
    },
    testTimeoutMs(600_000),
  );
});
