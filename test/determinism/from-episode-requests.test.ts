import { describe, expect, it } from "vitest";
import { createStub } from "../../src/engine/create-stub.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { userRequest } from "../support/requests.js";

/** The episode of `texts` sent in order to a script whose one entry answers every call. */
async function episodeOf(texts: string[]) {
  const stub = createStub({ script: loadScriptText("entries:\n  - { repeat: true, reply: hi }\n", "test.yaml"), clock: createVirtualClock() });
  const port = createInProcessPort(stub);
  for (const t of texts) await port.generate(userRequest(t));
  return stub.episode("default");
}

describe("script from-episode and the requests of an entry that answered several calls", () => {
  it("keeps the request when every call made it, and none, saying why, when they differ", async () => {
    const same = scriptFromEpisode(await episodeOf(["a", "a"]), "same.binpb");
    expect(same.problems).toEqual([]);
    expect(same.text).toMatch(/- times: 2\n\s+reply:\n\s+text: hi\n\s+request:\n\s+last_user: a\n/);
    const differ = scriptFromEpisode(await episodeOf(["a", "b"]), "differ.binpb");
    expect(differ.problems).toEqual([]);
    expect(differ.text).toMatch(
      /# written without request: it answered different requests in the recording\n {2}# call 2, .*\n {2}- times: 2\n {4}reply:\n {6}text: hi\n/,
    );
    expect(differ.text).not.toContain("request:\n");
    // Served, each script takes its requests again.
    for (const [made, texts] of [
      [same, ["a", "a"]],
      [differ, ["a", "b"]],
    ] as const) {
      const port = createInProcessPort(createStub({ script: loadScriptText(made.text, "made.yaml") }));
      for (const t of texts) expect((await port.generate(userRequest(t))).message?.content).toBe("hi");
    }
  });

  it("writes the digest of each request with --match digest, and no request: with --match none", async () => {
    const episode = await episodeOf(["a"]);
    expect(scriptFromEpisode(episode, "e.binpb", "digest").text).toMatch(/request: \{ digest: sha256:[0-9a-f]{64} \}|request:\n\s+digest: sha256:[0-9a-f]{64}/);
    const none = scriptFromEpisode(episode, "e.binpb", "none").text;
    expect(none).not.toMatch(/request:|replay:/);
  });
});
