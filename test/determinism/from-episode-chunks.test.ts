import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EpisodeSchema } from "../../gen/modelstub/v1/episode_pb.js";
import { createVirtualClock } from "../../src/engine/clock.js";
import { createStub } from "../../src/engine/create-stub.js";
import { createInProcessPort } from "../../src/port/in-process-port.js";
import { ModelCallError } from "../../src/index.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { collect, userRequest } from "../support/requests.js";

/**
 * `script from-episode` keeps what the client saw of a stream that ended before its reply did:
 * the same text, in the same chunks, before a break or the caller's cut-off.
 */
const breakScript = `entries:
  - reply: { text: "Alles erledigt: Wetter 18 °C, danke", chunks: ["Alles erledigt: ", "Wetter 18 °C, ", "danke"] }
    break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "upstream gone" } }
`;
/** Three chunks 100 ms apart on the virtual clock; a 250 ms deadline cuts it after the third. */
const slowScript = `entries:
  - reply: { text: "eins zwei drei vier fünf", chunks: ["eins zw", "ei drei ", "vier", " fünf"] }
    latency: { first_byte: 0ms, per_chunk: 100ms }
`;

const stubOf = (text: string) => createStub({ script: loadScriptText(text, "script.yaml"), clock: createVirtualClock() });

/** One stream call in a fresh stub on `script`: what the client saw (its text deltas and status), and the episode. */
async function streamOnce(script: string, timeoutMs?: number) {
  const stub = stubOf(script);
  const port = createInProcessPort(stub);
  const { frames, error } = await collect(port.generateStream(userRequest("Wetter?"), timeoutMs !== undefined ? { timeoutMs } : {}));
  const seen = {
    deltas: frames.flatMap((f) => (f.frame.case === "textDelta" ? [f.frame.value] : [])),
    code: error instanceof ModelCallError ? error.code : undefined,
  };
  return { seen, episode: stub.episodeBytes("default") };
}

describe("scriptFromEpisode() and what the client saw of a stream", () => {
  it("sends the same chunks before a break as the recording, where the words rule cut them otherwise, and reproduces the episode", async () => {
    const original = await streamOnce(breakScript);
    expect(original.seen.deltas).toEqual(["Alles erledigt: ", "Wetter 18 °C, "]);
    const { text, problems } = scriptFromEpisode(fromBinary(EpisodeSchema, original.episode), "break.binpb");
    expect(problems).toEqual([]);
    const replay = await streamOnce(text);
    expect(replay.seen).toEqual(original.seen);
    expect(Buffer.from(replay.episode).equals(Buffer.from(original.episode))).toBe(true);
  });

  it("sends the chunks a stream got before the caller's deadline cut it off, then holds it until the same deadline", async () => {
    const original = await streamOnce(slowScript, 250);
    expect(original.seen).toEqual({ deltas: ["eins zw", "ei drei ", "vier"], code: 4 });
    const { text, problems } = scriptFromEpisode(fromBinary(EpisodeSchema, original.episode), "cut.binpb");
    // The client sees the same; the replay's episode records a break where the recording's recorded the cut-off.
    expect(problems).toEqual([
      "call 1: the caller cut the stream off after 3 chunks: scripted as those chunks and a hang the same deadline or cancel ends, which the replay's episode records as a break",
    ]);
    expect((await streamOnce(text, 250)).seen).toEqual(original.seen);
  });

  it("leaves episodes of streams the words rule reproduces as they were, and notes (failing --strict) chunks a replay would not send", async () => {
    // A break after words: nothing new in the episode.
    const words = await streamOnce(`entries:\n  - reply: "one two three"\n    break: { after_chunks: 2, then: drop }\n`);
    expect(fromBinary(EpisodeSchema, words.episode).calls[0]!.sentTextChunks).toEqual([]);
    // Chunks sent that the reply's text does not begin with (an episode edited, or another
    // writer's): the script cannot send them, and --strict says what the client would see instead.
    const edited = fromBinary(EpisodeSchema, (await streamOnce(breakScript)).episode);
    edited.calls[0]!.sentTextChunks = ["Alles ", "erledigt! "];
    const { problems } = scriptFromEpisode(fromBinary(EpisodeSchema, toBinary(EpisodeSchema, edited)), "edited.binpb");
    expect(problems).toEqual([
      'call 1: a replay would send the client "Alles erledigt: " in 2 chunk(s) before the break, where the recording sent "Alles erledigt! " in 2',
    ]);
  });
});
