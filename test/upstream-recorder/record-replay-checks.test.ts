import { fromBinary } from "@bufbuild/protobuf";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { EpisodeSchema, Outcome } from "../../gen/modelstub/v1/episode_pb.js";
import { Code, startServer } from "../../src/index.js";
import { createOpenAiUpstream } from "../../src/upstream-recorder/openai-upstream.js";
import { startRecorder } from "../../src/upstream-recorder/start-recorder.js";
import { scriptFromEpisode } from "../../src/script/episode-to-script.js";
import type { MatchKind } from "../../src/script/request-match-of.js";
import { startPythonUpstream, type PythonAnswer } from "./upstreams/python-upstream.js";
import { readPriorScript, type PriorScript } from "../../src/upstream-recorder/prior-script.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testTimeoutMs } from "../support/test-timeout.js";

/** One request of the conversation: a user turn, or the result of the tool the last answer called. */
type Turn = { user: string } | { toolResult: string };

/** Ten requests: questions, one of which the model answers with a tool call whose result comes back. */
const turns: Turn[] = [
  { user: "hello, who are you?" },
  { user: "what can you do?" },
  { user: "what is the weather in Paris?" },
  { toolResult: "18 °C, light rain" },
  { user: "and in Berlin?" },
  { user: "which is warmer?" },
  { user: "thanks; a joke?" },
  { user: "another one" },
  { user: "turn eight: summarize" },
  { user: "turn nine: goodbye" },
];

/** The Python upstream's answers, one per request, in order. */
const answers: PythonAnswer[] = [
  { message: { content: "I am a model." } },
  { message: { content: "I answer questions." } },
  { message: { content: null, tool_calls: [{ id: "call_py_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] } },
  { message: { content: "Paris: 18 °C, light rain." } },
  { message: { content: "Berlin: 12 °C." } },
  { message: { content: "Paris is warmer." } },
  { message: { content: "A joke." } },
  { message: { content: "Another joke." } },
  { message: { content: "Summary: weather, jokes." } },
  { message: { content: "Goodbye!" } },
];

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

/** What the client saw of a call: the completion, or the error's status and message. */
type Seen = { completion: unknown } | { error: { status: number | undefined; message: string } };

/**
 * Sends the turns in order through the OpenAI SDK (no retries), each with the conversation so
 * far; a failed call leaves its request out of the history, as an agent that gave up would.
 */
async function converse(baseURL: string, send: Turn[]): Promise<Seen[]> {
  const client = new OpenAI({ baseURL, apiKey: "client-key", maxRetries: 0 });
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "system", content: "Be brief." }];
  let lastCall = "";
  const seen: Seen[] = [];
  for (const turn of send) {
    messages.push("user" in turn ? { role: "user", content: turn.user } : { role: "tool", tool_call_id: lastCall, content: turn.toolResult });
    try {
      const done = await client.chat.completions.create({ model: "py-model", messages, tools });
      const message = done.choices[0]!.message;
      messages.push({ role: "assistant", content: message.content, ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}) });
      lastCall = message.tool_calls?.[0]?.id ?? lastCall;
      seen.push({ completion: done });
    } catch (err) {
      const e = err as InstanceType<typeof OpenAI.APIError>;
      seen.push({ error: { status: e.status, message: e.message } });
    }
  }
  return seen;
}

/**
 * Records the conversation through a recorder in front of the Python upstream (answering with
 * `upstreamAnswers`); returns the script and what the client saw.
 */
async function record(
  match?: MatchKind,
  o: { send?: Turn[]; upstreamAnswers?: PythonAnswer[]; prior?: PriorScript } = {},
): Promise<{ script: string; seen: Seen[] }> {
  const upstream = await startPythonUpstream(o.upstreamAnswers ?? answers);
  try {
    const recorder = await startRecorder({
      upstream: createOpenAiUpstream(upstream.baseUrl, {}),
      http: "127.0.0.1:0",
      ...(match ? { match } : {}),
      ...(o.prior ? { prior: o.prior } : {}),
    });
    let seen: Seen[];
    try {
      seen = await converse(recorder.httpUrl!, o.send ?? turns);
    } finally {
      await recorder.close();
    }
    return { script: recorder.scriptText(), seen };
  } finally {
    await upstream.close();
  }
}

/** Serves `script` on the virtual clock and sends `send`; returns what the client saw and the episode. */
async function replay(script: string, send: Turn[], replayMode?: "strict" | "unordered" | "order-only") {
  const server = await startServer({ script, clock: "virtual", http: "127.0.0.1:0", ...(replayMode ? { replayMode } : {}) });
  try {
    const seen = await converse(server.httpUrl!, send);
    const bytes = server.control.episodeBytes("default");
    return { seen, bytes, episode: fromBinary(EpisodeSchema, bytes) };
  } finally {
    await server.close();
  }
}

const changed = turns.map((t, i) => (i === 2 ? { user: "what is 2+2?" } : t));
const swapped = [...turns.slice(0, 8), turns[9]!, turns[8]!];

describe("replay checks each request against the one recorded (a Python upstream, the TypeScript recorder)", { timeout: testTimeoutMs(120_000) }, () => {
  it("records the same script bytes twice, each entry with its request and the script in strict mode", async () => {
    // Each upstream listens on a port of its own, which the comments name: the rest is the same.
    const port = /127\.0\.0\.1:\d+/g;
    const first = (await record()).script.replace(port, "127.0.0.1:PORT");
    const second = (await record()).script.replace(port, "127.0.0.1:PORT");
    expect(second).toBe(first);
    expect(first).toContain("replay: { mode: strict }");
    expect(first).toMatch(/reply:\n\s+tool_calls:\n(.*\n)+?\s+request:\n\s+last_user: what is the weather in Paris\?\n\s+tools: \[ get_weather \]/);
    expect(first).toMatch(
      /request:\n\s+last_user: what is the weather in Paris\?\n\s+tool_results:\n\s+- \{ tool: get_weather, content: "18 °C, light rain" \}\n\s+tools: \[ get_weather \]/,
    );
  });

  it("replays the same conversation to what the client saw, with the same episode bytes every time", async () => {
    const { script, seen } = await record();
    const a = await replay(script, turns);
    const b = await replay(script, turns);
    expect(a.seen).toEqual(seen);
    expect(Buffer.from(b.bytes).equals(Buffer.from(a.bytes))).toBe(true);
    expect(a.episode.calls.map((c) => c.outcome)).toEqual(turns.map(() => Outcome.OK));
  });

  it("refuses a changed user text with HTTP 400 and a diff a person can read, recorded as FAILED_PRECONDITION", async () => {
    const { script } = await record();
    const r = await replay(script, changed);
    expect(r.seen[2]).toEqual({
      error: {
        status: 400,
        message:
          '400 the request does not match entries[2], the next recorded entry of entries (replay mode strict): expected last user "what is the weather in Paris?", got "what is 2+2?"; no other recorded entry is nearer; replay the recorded conversation, record it again, or serve with --replay-mode order-only',
      },
    });
    const call = r.episode.calls[2]!;
    expect(call.outcome).toBe(Outcome.ERROR);
    expect(call.status?.code).toBe(Code.FAILED_PRECONDITION);
    expect(call.entry).toBe("");
  });

  it("refuses swapped turns 8 and 9, naming the recorded entry the request came from", async () => {
    const { script } = await record();
    const r = await replay(script, swapped);
    expect(r.seen.slice(0, 8).every((s) => "completion" in s)).toBe(true);
    expect((r.seen[8] as { error: { message: string } }).error.message).toContain(
      'the request does not match entries[8], the next recorded entry of entries (replay mode strict): expected last user "turn eight: summarize", got "turn nine: goodbye"; nearest recorded entry: entries[9] (matches exactly: the requests came in another order than recorded)',
    );
    expect(r.episode.calls[8]!.status?.code).toBe(Code.FAILED_PRECONDITION);
  });

  it("answers changed and swapped requests as before with --replay-mode order-only, and swapped ones each with its own answer when unordered", async () => {
    const { script, seen } = await record();
    const ordered = await replay(script, changed, "order-only");
    expect(ordered.seen.every((s) => "completion" in s)).toBe(true);
    expect(ordered.seen[2]).toEqual(seen[2]);
    const unordered = await replay(script, swapped, "unordered");
    expect(unordered.episode.calls.map((c) => c.entry)).toEqual([
      "entries[0]",
      "entries[1]",
      "entries[2]",
      "entries[3]",
      "entries[4]",
      "entries[5]",
      "entries[6]",
      "entries[7]",
      "entries[9]",
      "entries[8]",
    ]);
    const text = (s: Seen) => (s as { completion: { choices: { message: { content: string } }[] } }).completion.choices[0]!.message.content;
    expect([text(unordered.seen[8]!), text(unordered.seen[9]!)]).toEqual(["Goodbye!", "Summary: weather, jokes."]);
    // A script's own replay.mode says the same as the flag.
    const fromScript = await replay(script.replace("replay: { mode: strict }", "replay: { mode: order-only }"), changed);
    expect(fromScript.seen.every((s) => "completion" in s)).toBe(true);
  });

  it("keeps the digest of the canonical request with --match digest, and refuses a changed request by it", async () => {
    const { script } = await record("digest");
    expect(script).toMatch(/request: \{ digest: sha256:[0-9a-f]{64} \}|request:\n\s+digest: sha256:[0-9a-f]{64}/);
    expect((await replay(script, turns)).seen.every((s) => "completion" in s)).toBe(true);
    const r = await replay(script, changed);
    expect((r.seen[2] as { error: { message: string } }).error.message).toMatch(
      /^400 the request does not match entries\[2\], the next recorded entry of entries \(replay mode strict\): expected request digest sha256:[0-9a-f]{12}\.\.\., got sha256:[0-9a-f]{12}\.\.\. \(last user "what is 2\+2\?"\)/,
    );
  });

  it("writes the requests from an episode too: from-episode's script refuses the changed conversation", async () => {
    const { script } = await record();
    const r = await replay(script, turns);
    const made = scriptFromEpisode(r.episode, "default.episode.binpb");
    expect(made.problems).toEqual([]);
    expect(made.text).toContain("replay: { mode: strict }");
    const again = await replay(made.text, turns);
    expect(Buffer.from(again.bytes).equals(Buffer.from(r.bytes))).toBe(true);
    expect((await replay(made.text, changed)).episode.calls[2]!.status?.code).toBe(Code.FAILED_PRECONDITION);
  });

  it("new-episodes: answers the requests the script recorded from it, and records only the misses, after its entries", async () => {
    const dir = await mkdtemp(join(tmpdir(), "modelstub-new-episodes-"));
    try {
      const whole = await record();
      // A first recording of six requests; then the whole conversation, against an upstream that has only the last four answers.
      const file = join(dir, "recorded.yaml");
      await writeFile(file, (await record(undefined, { send: turns.slice(0, 6), upstreamAnswers: answers.slice(0, 6) })).script);
      const extended = await record(undefined, { prior: await readPriorScript(file), upstreamAnswers: answers.slice(6) });
      expect(extended.seen).toEqual(whole.seen);
      expect(extended.script).toMatch(
        /^# Extended by `modelstub record --record-mode new-episodes` from .*: 10 calls of session "default", 6 answered from the script, 4 recorded after its entries\./,
      );
      expect(extended.script).toContain("replay: { mode: unordered }");
      // The first recording's entries keep their comments; the new ones follow, numbered on.
      expect(extended.script).toMatch(/\nentries:\n {2}# call 1 \(Generate\) -> /);
      expect(extended.script.match(/ call \d+ \(Generate\)/g)).toHaveLength(10);
      expect(extended.script).toMatch(
        /# call 6 \(Generate\) -> .*\n\s+- reply:\n\s+text: Paris is warmer\.(.*\n)+\s+# new-episodes run, call 7 \(Generate\) -> .*\n\s+- reply:\n\s+text: A joke\./,
      );
      const again = await replay(extended.script, turns);
      expect(again.seen).toEqual(whole.seen);
      expect(again.episode.calls.map((c) => c.entry)).toEqual(turns.map((_, i) => `entries[${i}]`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
