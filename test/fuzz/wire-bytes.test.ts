import { Code } from "../../src/index.js";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoadScriptRequestSchema } from "../../gen/modelstub/v1/control_pb.js";
import { GenerateRequestSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { checkAfterBatch, codeName, grpcFrame, rawCall, rawSession, startFuzzServer, type FuzzServer, type RawAnswer } from "./harness.js";
import { createRng, randomText, replay, scaled, type Rng } from "./prng.js";

/*
 * Batch 1: random and mutated wire bytes sent as raw HTTP/2 gRPC requests. Every request must
 * get an answer with a gRPC status (never a crash, never a hang), and no answer may be the
 * stub's own "modelstub internal error".
 */

const paths = ["/modelstub.v1.ModelService/Generate", "/modelstub.v1.ModelService/GenerateStream", "/modelstub.v1.ControlService/LoadScript"] as const;

/** A valid request body for the path, from random values. */
function validBody(rng: Rng, path: string): Uint8Array {
  if (path.endsWith("LoadScript")) {
    const script = rng.chance(0.5) ? `entries:\n  - repeat: true\n    reply: "${randomText(rng, 20).replace(/[\\"\p{C}]/gu, "")}"\n` : randomText(rng, 200);
    return toBinary(LoadScriptRequestSchema, create(LoadScriptRequestSchema, { session: `wire-${rng.int(4)}`, script }));
  }
  return toBinary(
    GenerateRequestSchema,
    create(GenerateRequestSchema, {
      model: randomText(rng, 10),
      stepId: rng.chance(0.2) ? randomText(rng, 10) : "",
      messages: Array.from({ length: rng.int(4) }, () => ({
        role: rng.pick([Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM]),
        content: rng.chance(0.5) ? `PROBE-ECHO ${randomText(rng, 40)}` : randomText(rng, 40),
        toolCallId: rng.chance(0.2) ? randomText(rng, 5) : "",
      })),
    }),
  );
}

/** One mutated request: a name for the kind (recorded with the status it got) and the bytes. */
function mutate(rng: Rng, body: Uint8Array): { kind: string; bytes: Buffer } {
  const b = Buffer.from(body);
  switch (rng.int(10)) {
    case 0:
      return { kind: "random body", bytes: grpcFrame(rng.bytes(rng.int(300))) };
    case 1:
      return { kind: "truncated", bytes: grpcFrame(b.subarray(0, rng.int(b.length + 1))) };
    case 2: {
      const c = Buffer.from(b);
      for (let i = rng.range(1, 8); i > 0 && c.length > 0; i--) c[rng.int(c.length)]! ^= 1 << rng.int(8);
      return { kind: "bit flips", bytes: grpcFrame(c) };
    }
    case 3:
      return { kind: "duplicated encoding", bytes: grpcFrame(Buffer.concat([b, b])) };
    case 4:
      return { kind: "two frames", bytes: Buffer.concat([grpcFrame(b), grpcFrame(b)]) };
    case 5:
      return { kind: "frame length too long", bytes: grpcFrame(b, { length: b.length + rng.range(1, 1000) }) };
    case 6:
      return { kind: "frame length too short", bytes: grpcFrame(b, { length: rng.int(Math.max(1, b.length)) }) };
    case 7:
      return { kind: "compressed flag", bytes: grpcFrame(b, { compressed: true }) };
    case 8:
      return { kind: "no frame", bytes: rng.chance(0.5) ? Buffer.alloc(0) : rng.bytes(rng.int(5)) };
    default: {
      // A random field tag and length spliced in somewhere.
      const at = rng.int(b.length + 1);
      return { kind: "spliced bytes", bytes: grpcFrame(Buffer.concat([b.subarray(0, at), rng.bytes(rng.range(1, 12)), b.subarray(at)])) };
    }
  }
}

describe("fuzz: random and mutated wire bytes", () => {
  let server: FuzzServer;
  beforeAll(async () => {
    server = await startFuzzServer(["--clock", "virtual"]);
  }, 60_000);
  afterAll(() => server?.close());

  it("answers every request with a gRPC status and keeps serving", async () => {
    const rng = createRng("wire-bytes");
    const batches = 3;
    const perBatch = scaled(400);
    const codes = new Map<string, number>();
    let index = 0;
    for (let batch = 0; batch < batches; batch++) {
      const session = rawSession(server.address);
      // 8 requests in flight at a time on one connection.
      for (let i = 0; i < perBatch; i += 8) {
        const cases = Array.from({ length: Math.min(8, perBatch - i) }, () => {
          const path = rng.pick(paths);
          const m = mutate(rng, validBody(rng, path));
          const headers: Record<string, string> = { "x-modelstub-session": `wire-${rng.int(4)}` };
          if (rng.chance(0.1)) headers["grpc-encoding"] = rng.pick(["gzip", "deflate", "identity", "bogus"]);
          return { index: index++, path, ...m, headers };
        });
        const answers = await Promise.all(cases.map((c) => rawCall(session, c.path, c.bytes, c.headers)));
        cases.forEach((c, k) => {
          const a: RawAnswer = answers[k]!;
          const what = `${replay("wire-bytes", c.index)}: ${c.kind} to ${c.path} answered ${JSON.stringify(a)}`;
          expect(a.timedOut, what).toBe(false);
          expect(a.grpcStatus, what).toBeTypeOf("number");
          expect(a.grpcMessage, what).not.toMatch(/modelstub internal error/);
          // INTERNAL only as grpc-js itself answers bytes that do not decode as the request message
          // (or, with a compressed flag and grpc-encoding, do not decompress).
          if (a.grpcStatus === Code.INTERNAL) expect(a.grpcMessage, what).toMatch(/^(Error deserializing request|Failed to decompress message)/);
          const key = `${c.path.split("/")[2]} ${c.kind}: ${codeName(a.grpcStatus)}`;
          codes.set(key, (codes.get(key) ?? 0) + 1);
          if (a.grpcStatus === Code.INTERNAL)
            codes.set(`INTERNAL message: ${a.grpcMessage.slice(0, 80)}`, (codes.get(`INTERNAL message: ${a.grpcMessage.slice(0, 80)}`) ?? 0) + 1);
        });
      }
      session.close();
      await checkAfterBatch(server, `wire-bytes batch ${batch}`);
    }
    console.log(
      `wire bytes: ${index} requests; statuses:\n${[...codes]
        .sort()
        .map(([k, n]) => `  ${k}: ${n}`)
        .join("\n")}`,
    );
  }, 120_000);
});
