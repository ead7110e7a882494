import { describe, expect, it } from "vitest";
import { runCli } from "../support/run-cli.js";
import { testTimeoutMs } from "../support/test-timeout.js";

/*
 * Issue 31, item 9: `modelstub session frobnicate` exited 1 where docs/cli.md says an unknown
 * command exits 2, and `episode compare A /nonexistent` printed Node's raw ENOENT.
 */
describe("the CLI's smaller promises", { timeout: testTimeoutMs(60_000) }, () => {
  it("exits 2 for an unknown session command, with a did-you-mean", async () => {
    const typo = await runCli(["session", "verfy", "s"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      'modelstub session: unknown command "verfy"; did you mean "verify"?\n(run `modelstub session --help` for the commands and options)\n',
    );
    const unknown = await runCli(["session", "frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^modelstub session: unknown command "frobnicate"\n/);
  });

  it("says in words that an episode file to compare does not exist, and exits 2 as documented", async () => {
    const missing = await runCli(["episode", "compare", "test/fixtures/none.binpb", "/nonexistent"]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).not.toContain("ENOENT");
    expect(missing.stderr).toMatch(/^modelstub episode: cannot read the episode (test\/fixtures\/none\.binpb|\/nonexistent): there is no such file\n$/);
  });

  it("says a file is no episode, rather than a decoder's message alone", async () => {
    const notEpisode = await runCli(["episode", "package.json"]);
    expect(notEpisode.code).toBe(2);
    expect(notEpisode.stderr).toMatch(
      /^modelstub episode: cannot read the episode package\.json: it is not an episode \(.+\): expected the \.binpb bytes a server writes, or the \.json beside them\n$/,
    );
  });
});
