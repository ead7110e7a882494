// The bench's wire bytes, built with protobuf-es from the project's own schema: the generated
// code in dist/ when it is built, else a descriptor set that buf builds from proto/ (the same
// schema, so the same bytes). The floor servers answer exactly these bytes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { CACHE_DIR, DIST_MODEL_PB, PROTOSET, REPO_DIR } from "./paths.mjs";

/** Builds the protoset (for ghz and for the schemas) unless it is newer than every proto. */
export function ensureProtoset() {
  const protoDir = path.join(REPO_DIR, "proto");
  const newest = Math.max(...listFiles(protoDir).map((f) => fs.statSync(f).mtimeMs));
  if (fs.existsSync(PROTOSET) && fs.statSync(PROTOSET).mtimeMs >= newest) return PROTOSET;
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const buf = path.join(REPO_DIR, "node_modules", ".bin", "buf");
  execFileSync(buf, ["build", "-o", PROTOSET], { cwd: REPO_DIR, stdio: ["ignore", "ignore", "inherit"] });
  return PROTOSET;
}

function listFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? listFiles(path.join(dir, d.name)) : [path.join(dir, d.name)]));
}

/** The message schemas: { source, GenerateRequest, GenerateResponse, GenerateStreamRequest, GenerateStreamResponse, Role, FinishReason }. */
export async function loadSchemas() {
  if (fs.existsSync(DIST_MODEL_PB)) {
    const m = await import(DIST_MODEL_PB);
    return {
      source: "dist/gen (generated protobuf-es)",
      GenerateRequest: m.GenerateRequestSchema,
      GenerateResponse: m.GenerateResponseSchema,
      GenerateStreamRequest: m.GenerateStreamRequestSchema,
      GenerateStreamResponse: m.GenerateStreamResponseSchema,
      ListModelsRequest: m.ListModelsRequestSchema,
      Role: { USER: m.Role.USER, ASSISTANT: m.Role.ASSISTANT },
      FinishReason: { STOP: m.FinishReason.STOP },
    };
  }
  const set = fromBinary(FileDescriptorSetSchema, fs.readFileSync(ensureProtoset()));
  const reg = createFileRegistry(set);
  const msg = (n) => reg.getMessage(`modelstub.v1.${n}`);
  const role = reg.getEnum("modelstub.v1.Role");
  const finish = reg.getEnum("modelstub.v1.FinishReason");
  return {
    source: "buf build of proto/ (same schema; dist/ not built)",
    GenerateRequest: msg("GenerateRequest"),
    GenerateResponse: msg("GenerateResponse"),
    GenerateStreamRequest: msg("GenerateStreamRequest"),
    GenerateStreamResponse: msg("GenerateStreamResponse"),
    ListModelsRequest: msg("ListModelsRequest"),
    Role: { USER: role.values.find((v) => v.name === "ROLE_USER").number, ASSISTANT: role.values.find((v) => v.name === "ROLE_ASSISTANT").number },
    FinishReason: { STOP: finish.values.find((v) => v.name === "FINISH_REASON_STOP").number },
  };
}

// What the bench scripts make modelstub say; the floor says the same bytes.
export const UNARY_REPLY = "Hello from modelstub";
export const PROMPT = "Say hello";
export const MODEL = "modelstub"; // the default model of a script that declares none
export const STREAM_CHUNKS = 1000;
// A 1,000-character text cut into 1-character chunks: 1,000 text frames, then the final frame.
export const STREAM_TEXT = "abcdefghij".repeat(STREAM_CHUNKS / 10);

export const STREAM_ID = "gen-default-10"; // a typical stream id

/** The rule modelstub documents: one token per 4 UTF-8 bytes, rounded up. */
const tokens = (s) => (s.length === 0 ? 0 : Math.ceil(Buffer.byteLength(s, "utf8") / 4));

/**
 * GripMock's stub for the same stream (output.stream, protojson names): the frames buildPayloads
 * builds, field for field, so GripMock answers the same bytes. Written by the stream section.
 */
export function gripmockStreamStub() {
  const frame = (f) => `      - {id: ${STREAM_ID}, model: ${MODEL}, ${f}}`;
  const input = tokens(PROMPT);
  const out = tokens(STREAM_TEXT);
  return [
    `# GripMock v3 stream stub, written by the bench (bench/lib/payloads.mjs): ${STREAM_CHUNKS} text frames, then the final frame.`,
    "- service: ModelService",
    "  method: GenerateStream",
    "  input:",
    "    contains: {}",
    "  output:",
    "    stream:",
    ...[...STREAM_TEXT].map((ch) => frame(`textDelta: ${JSON.stringify(ch)}`)),
    frame(`final: {finishReason: FINISH_REASON_STOP, usage: {inputTokens: ${input}, outputTokens: ${out}, totalTokens: ${input + out}}}`),
    "",
  ].join("\n");
}

/**
 * All bytes: the request, the constant unary response (sized like modelstub's reply to the unary
 * script: id `gen-default-<seq>` with a 4-digit sequence), and the stream frames.
 */
export async function buildPayloads() {
  const S = await loadSchemas();
  const messages = [{ role: S.Role.USER, content: PROMPT }];
  const request = Buffer.from(toBinary(S.GenerateRequest, create(S.GenerateRequest, { messages })));
  const streamRequest = Buffer.from(toBinary(S.GenerateStreamRequest, create(S.GenerateStreamRequest, { messages })));
  const input = tokens(PROMPT);
  const out = tokens(UNARY_REPLY);
  const response = Buffer.from(
    toBinary(
      S.GenerateResponse,
      create(S.GenerateResponse, {
        id: "gen-default-1000",
        model: MODEL,
        message: { role: S.Role.ASSISTANT, content: UNARY_REPLY },
        finishReason: S.FinishReason.STOP,
        usage: { inputTokens: input, outputTokens: out, totalTokens: input + out },
      }),
    ),
  );
  const id = STREAM_ID;
  const frames = [];
  for (let i = 0; i < STREAM_CHUNKS; i++) {
    frames.push(
      Buffer.from(
        toBinary(S.GenerateStreamResponse, create(S.GenerateStreamResponse, { id, model: MODEL, frame: { case: "textDelta", value: STREAM_TEXT[i] } })),
      ),
    );
  }
  const sOut = tokens(STREAM_TEXT);
  frames.push(
    Buffer.from(
      toBinary(
        S.GenerateStreamResponse,
        create(S.GenerateStreamResponse, {
          id,
          model: MODEL,
          frame: { case: "final", value: { finishReason: S.FinishReason.STOP, usage: { inputTokens: input, outputTokens: sOut, totalTokens: input + sOut } } },
        }),
      ),
    ),
  );
  const listModelsRequest = Buffer.from(toBinary(S.ListModelsRequest, create(S.ListModelsRequest, {})));
  return { schemaSource: S.source, request, streamRequest, response, frames, listModelsRequest };
}

/** Writes the payloads to the cache for the server and load-generator processes; returns the file. */
export async function writePayloadFile() {
  const p = await buildPayloads();
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const file = path.join(CACHE_DIR, "payloads.json");
  const json = {
    schemaSource: p.schemaSource,
    request: p.request.toString("base64"),
    streamRequest: p.streamRequest.toString("base64"),
    response: p.response.toString("base64"),
    frames: p.frames.map((f) => f.toString("base64")),
    listModelsRequest: p.listModelsRequest.toString("base64"),
  };
  fs.writeFileSync(file, JSON.stringify(json));
  fs.writeFileSync(path.join(CACHE_DIR, "request.bin"), p.request);
  return { file, requestBin: path.join(CACHE_DIR, "request.bin"), ...p };
}

/** Reads the payload file written by writePayloadFile. */
export function readPayloadFile(file) {
  const j = JSON.parse(fs.readFileSync(file, "utf8"));
  const b = (s) => Buffer.from(s, "base64");
  return {
    schemaSource: j.schemaSource,
    request: b(j.request),
    streamRequest: b(j.streamRequest),
    response: b(j.response),
    frames: j.frames.map(b),
    listModelsRequest: b(j.listModelsRequest),
  };
}
