// modelstub's TypeScript interop client: the repository's own gRPC port (grpc-js + protobuf-es),
// from the built dist/ (npm run build).
//
//   node executor.mjs -addr 127.0.0.1:PORT -session NAME -out FILE   runs the interop scenario
//   node executor.mjs -reencode IN -out OUT                          re-encodes Episode bytes
//
// The scenario is described in test/interop/README.md; every executor runs it identically
// (go/main.go is the reference for the call sequence and the request fields).
import { readFileSync, writeFileSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { openGrpcPort } from "../../../dist/src/port/grpc-port.js";
import { createControlClient } from "../../../dist/src/port/control-client.js";
import { EpisodeSchema } from "../../../dist/gen/modelstub/v1/episode_pb.js";
import {
  FinishReasonSchema,
  GenerateRequestSchema,
  MessageSchema,
  Role,
  SamplingParamsSchema,
  ToolCallSchema,
  ToolSchema,
} from "../../../dist/gen/modelstub/v1/model_pb.js";

const MODEL = "interop-model";
// Bounds every call but the "stuck" one, so a broken server cannot hang the suite.
const SAFETY_DEADLINE_MS = 20_000;
const STUCK_DEADLINE_MS = 300;
const MAX_ATTEMPTS = 3;
const RETRY_AFTER_CAP_MS = 200;
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

// The canonical status names, so every executor prints them alike.
const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** Prints what was expected and what came, then exits 1. */
function fail(step, expected, got) {
  process.stdout.write(`step ${step} FAILED\n`);
  process.stderr.write(
    `step ${step}: expected ${expected}\nstep ${step}: got      ${typeof got === "string" ? got : JSON.stringify(got, (_k, v) => (typeof v === "bigint" ? String(v) : v))}\n`,
  );
  process.exit(1);
}

/** Quotes a text the same way in every executor: backslash, quote, \n, \r, \t escaped. */
function quote(s) {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`;
}

function describe(err) {
  if (typeof err?.code !== "number") return String(err);
  return `${CODE_NAMES[err.code] ?? `CODE_${err.code}`}: ${err.details}`;
}

const msg = (role, content) => create(MessageSchema, { role, content });

const tools = () => [
  create(ToolSchema, {
    name: "bash",
    description: "Run a shell command",
    parametersJson: '{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}',
  }),
];

// Both fields are proto3 `optional`: naming them sets their presence, even for 0.
const sampling = () => create(SamplingParamsSchema, { temperature: 0, maxTokens: 256 });

// The port sends GenerateStream with the same fields as this request.
const generateRequest = (messages, stepId) =>
  create(GenerateRequestSchema, { model: MODEL, messages: [...messages], tools: tools(), sampling: sampling(), stepId });

function reencode(input, output) {
  let episode;
  try {
    episode = fromBinary(EpisodeSchema, readFileSync(input));
  } catch (err) {
    fail(0, "modelstub.v1.Episode bytes", String(err));
  }
  writeFileSync(output, toBinary(EpisodeSchema, episode));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function scenario(addr, session, out) {
  const model = openGrpcPort(addr);
  const control = createControlClient(addr);
  const opts = (timeoutMs) => ({ session, timeoutMs });
  try {
    const conversation = [msg(Role.SYSTEM, "You are a test agent."), msg(Role.USER, "List the files in /tmp")];

    // Step 1: a tool call.
    let resp = await model.generate(generateRequest(conversation, "plan"), opts(SAFETY_DEADLINE_MS)).catch((e) => fail(1, "OK", describe(e)));
    const calls = resp.message?.toolCalls ?? [];
    if (calls.length === 0 || calls[0].name !== "bash") fail(1, 'message.tool_calls[0] with name "bash"', resp);
    const call = calls[0];
    console.log(`step 1 ok: tool call ${call.name} ${call.arguments} id=${call.id}`);

    // Step 2: the tool's result, then a text reply.
    conversation.push(
      create(MessageSchema, {
        role: Role.ASSISTANT,
        content: "",
        toolCalls: [create(ToolCallSchema, { id: call.id, name: call.name, arguments: call.arguments })],
      }),
      create(MessageSchema, { role: Role.TOOL, content: "a.txt\nb.txt", toolCallId: call.id }),
    );
    resp = await model.generate(generateRequest(conversation, "plan"), opts(SAFETY_DEADLINE_MS)).catch((e) => fail(2, "OK", describe(e)));
    if (!resp.message?.content || resp.message.toolCalls.length !== 0) fail(2, "a text reply with no tool calls", resp);
    let text = resp.message.content;
    console.log(`step 2 ok: text ${quote(text)}`);
    conversation.push(msg(Role.ASSISTANT, text));

    // Step 3: a streamed summary.
    conversation.push(msg(Role.USER, "Summarize"));
    const parts = [];
    let final;
    try {
      for await (const frame of model.generateStream(generateRequest(conversation, "summarize"), opts(SAFETY_DEADLINE_MS))) {
        if (final !== undefined) fail(3, "the final frame last", `a frame after it: ${frame.frame.case}`);
        if (frame.frame.case === "textDelta") parts.push(frame.frame.value);
        else if (frame.frame.case === "final") final = frame.frame.value;
        else fail(3, "text_delta or final frames", String(frame.frame.case));
      }
    } catch (e) {
      fail(3, "the stream to end OK", describe(e));
    }
    if (final === undefined) fail(3, "a final frame", "the stream ended without one");
    if (final.usage === undefined) fail(3, "usage in the final frame", final);
    text = parts.join("");
    if (text === "") fail(3, "text deltas", "no text");
    const finish = FinishReasonSchema.values.find((v) => v.number === final.finishReason)?.name ?? String(final.finishReason);
    const u = final.usage;
    console.log(`step 3 ok: stream ${parts.length} text deltas ${quote(text)} final ${finish} usage ${u.inputTokens}/${u.outputTokens}/${u.totalTokens}`);
    conversation.push(msg(Role.ASSISTANT, text));

    // Step 4: UNAVAILABLE twice, then success.
    let attempt = 0;
    for (;;) {
      attempt++;
      try {
        resp = await model.generate(generateRequest(conversation, "flaky"), opts(SAFETY_DEADLINE_MS));
        break;
      } catch (e) {
        if (e?.code !== UNAVAILABLE || attempt >= MAX_ATTEMPTS)
          fail(4, `UNAVAILABLE then success on attempt ${MAX_ATTEMPTS}`, `attempt ${attempt}: ${describe(e)}`);
        const value = e.trailers.find(([k]) => k === "retry-after-ms")?.[1];
        const ms = value !== undefined && /^\d+$/.test(value.trim()) ? Number(value.trim()) : 0;
        if (ms > 0) await sleep(Math.min(ms, RETRY_AFTER_CAP_MS));
      }
    }
    if (attempt !== MAX_ATTEMPTS) fail(4, `success on attempt ${MAX_ATTEMPTS}`, `success on attempt ${attempt}`);
    console.log(`step 4 ok: attempt ${attempt} succeeded after ${attempt - 1} UNAVAILABLE, text ${quote(resp.message?.content ?? "")}`);

    // Step 5: the caller's deadline cuts the call off.
    const stuck = await model.generate(generateRequest(conversation, "stuck"), opts(STUCK_DEADLINE_MS)).then(
      (r) => ({ r }),
      (e) => ({ e }),
    );
    if (stuck.r) fail(5, "DEADLINE_EXCEEDED", stuck.r);
    if (stuck.e?.code !== DEADLINE_EXCEEDED) fail(5, "DEADLINE_EXCEEDED", describe(stuck.e));
    console.log("step 5 ok: DEADLINE_EXCEEDED");

    // Step 6: the episode's bytes.
    const ep = await control.call("GetEpisode", { session }, { timeoutMs: SAFETY_DEADLINE_MS }).catch((e) => fail(6, "OK", describe(e)));
    if (!ep.episodeBinpb?.length) fail(6, "episode_binpb bytes", "none");
    writeFileSync(out, ep.episodeBinpb);
    console.log(`step 6 ok: episode ${ep.episode?.calls.length ?? 0} calls, ${ep.episodeBinpb.length} bytes written to ${out}`);
  } finally {
    model.close();
    control.close();
  }
}

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?(addr|session|out|reencode)(?:=(.*))?$/.exec(argv[i]);
    if (!m) return undefined;
    args[m[1]] = m[2] ?? argv[++i];
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
if (args?.reencode && args.out) reencode(args.reencode, args.out);
else if (args?.addr && args.session && args.out) await scenario(args.addr, args.session, args.out);
else {
  process.stderr.write("usage: executor.mjs -addr HOST:PORT -session NAME -out FILE\n       executor.mjs -reencode IN -out OUT\n");
  process.exit(2);
}
