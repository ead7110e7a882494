import { Code } from "../../src/index.js";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema, Role } from "../../gen/modelstub/v1/model_pb.js";
import { checkAfterBatch, codeName, startFuzzServer, type FuzzServer } from "./harness.js";
import { createRng, randomText, replay, scaled, type Rng } from "./prng.js";
import { variedScript } from "./scripts.js";

/*
 * Batch 2: random protobuf requests, built with create() from random values, against the
 * built-in default script and a varied one. Every answer is a status; none is "modelstub
 * internal error", and INTERNAL comes only from the varied script's scripted drop.
 */

const pass = (b: Buffer) => b;

const stepIds = ["", "", "", "", "", "", "", "", "", "plan", "plan", "act", "agent/lint", "summarize", "Plan", "bad step", "a".repeat(129), "日本", "x\u0000y"];
const sessionNames = ["default", "fuzz-a", "fuzz-b", "fuzz_c.1", "fuzz-a", "fuzz-b", "", "", "bad name", "a".repeat(129), "x/y"];
const markers = [
  "PROBE-ECHO ",
  "PROBE-PWD",
  "PROBE-READ a.md",
  "PROBE-NOCHANGE b.md",
  "weather in Paris on Monday",
  "fail",
  "drop",
  "break",
  "hang",
  "timeout",
  "plan 42",
  "",
];

/** A printable-ASCII text (metadata values must be). */
function asciiText(rng: Rng, max: number): string {
  return Array.from({ length: rng.int(max + 1) }, () => String.fromCharCode(rng.range(0x20, 0x7e))).join("");
}

function randomRequest(rng: Rng): MessageInitShape<typeof GenerateRequestSchema> {
  const huge = rng.chance(0.02);
  const messageCount = rng.chance(0.01) ? 10_001 : rng.int(6);
  const messages = Array.from({ length: messageCount }, (_, i) => {
    const role = rng.pick([Role.USER, Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM, Role.UNSPECIFIED, 7 as Role]);
    const content = huge && i === 0 ? `${rng.pick(markers)} ${"x".repeat(rng.range(100_000, 1_500_000))}` : `${rng.pick(markers)}${randomText(rng, 60)}`;
    return {
      role,
      content: messageCount > 100 ? "" : content,
      name: rng.chance(0.1) ? randomText(rng, 10) : "",
      toolCallId: rng.chance(0.2) ? rng.pick(["call-1", randomText(rng, 8)]) : "",
      toolCalls: rng.chance(0.2)
        ? Array.from({ length: rng.int(4) }, () => ({
            id: rng.pick(["call-1", randomText(rng, 8)]),
            name: rng.pick(["read", "bash", randomText(rng, 8)]),
            arguments: rng.chance(0.5) ? '{"path":"a.md"}' : randomText(rng, 30),
          }))
        : [],
    };
  });
  return {
    model: rng.pick(["", "fuzz-model", "modelstub-default", randomText(rng, 20)]),
    stepId: rng.pick(stepIds),
    messages,
    tools: rng.chance(0.2)
      ? Array.from({ length: rng.int(5) }, () => ({ name: randomText(rng, 10), description: randomText(rng, 30), parametersJson: randomText(rng, 30) }))
      : [],
    sampling: rng.chance(0.3)
      ? {
          temperature: rng.pick([0, 1, -1, Number.NaN, Infinity, 1e308]),
          topP: rng.next(),
          maxTokens: rng.int(2 ** 32),
          stop: Array.from({ length: rng.int(3) }, () => randomText(rng, 5)),
          seed: BigInt(rng.int(2 ** 31)) - 2n ** 30n,
        }
      : undefined,
  };
}

interface Answer {
  code: number;
  details: string;
}

function call(client: Client, method: "Generate" | "GenerateStream", bytes: Buffer, metadata: Metadata, timeoutMs: number): Promise<Answer> {
  const path = `/modelstub.v1.ModelService/${method}`;
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const done = (err: ServiceError | null) => resolve({ code: err?.code ?? Code.OK, details: err?.details ?? "" });
    if (method === "Generate") client.makeUnaryRequest(path, pass, pass, bytes, metadata, { deadline }, (err) => done(err));
    else {
      const c = client.makeServerStreamRequest(path, pass, pass, bytes, metadata, { deadline });
      c.on("data", () => {});
      c.on("error", (err: ServiceError) => done(err));
      c.on("end", () => done(null));
    }
  });
}

describe("fuzz: random protobuf requests", () => {
  let server: FuzzServer;
  const clients: Client[] = [];
  beforeAll(async () => {
    server = await startFuzzServer(["--clock", "virtual", "--max-message-bytes", "8388608"]);
    // Two channels: distinct options keep grpc-js from sharing one connection.
    for (let i = 0; i < 2; i++)
      clients.push(new Client(server.address, credentials.createInsecure(), { "grpc.max_send_message_length": -1, "fuzz.channel": i } as never));
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.close();
  });

  it("answers every request with a status, never the stub's internal error", async () => {
    const rng = createRng("random-requests");
    const batches = 3;
    const perBatch = scaled(300);
    const codes = new Map<string, number>();
    let index = 0;
    for (let batch = 0; batch < batches; batch++) {
      // Loaded afresh for each batch: the check after a batch deletes every session.
      for (const name of ["fuzz-varied-a", "fuzz-varied-b"])
        await server.control.call("LoadScript", { session: name, script: variedScript, sourceName: "varied.yaml" });
      for (let i = 0; i < perBatch; i += 8) {
        const cases = Array.from({ length: Math.min(8, perBatch - i) }, () => {
          const varied = rng.chance(0.5);
          const md = new Metadata();
          const session = varied ? rng.pick(["fuzz-varied-a", "fuzz-varied-b"]) : rng.chance(0.95) ? rng.pick(sessionNames) : asciiText(rng, 20);
          if (session) md.set("x-modelstub-session", session);
          const step = rng.chance(0.2) ? (rng.chance(0.7) ? rng.pick(stepIds) : asciiText(rng, 12)) : "";
          // grpc-js refuses to send a value that is not printable ASCII: such a step goes in the request only.
          try {
            if (step) md.set("x-modelstub-step", step);
          } catch {}
          const request = randomRequest(rng);
          const bytes = Buffer.from(toBinary(GenerateRequestSchema, create(GenerateRequestSchema, request)));
          return {
            index: index++,
            varied,
            session,
            method: rng.pick(["Generate", "GenerateStream"] as const),
            bytes,
            md,
            client: rng.pick(clients),
            timeoutMs: rng.pick([50, 500, 5000]),
          };
        });
        const answers = await Promise.all(cases.map((c) => call(c.client, c.method, c.bytes, c.md, c.timeoutMs)));
        cases.forEach((c, k) => {
          const a = answers[k]!;
          const what = `${replay("random-requests", c.index)}: ${c.method} (${c.varied ? "varied script" : "default script"}, session ${JSON.stringify(c.session)}, ${c.bytes.length} bytes) answered ${codeName(a.code)} ${JSON.stringify(a.details.slice(0, 300))}`;
          expect(a.details, what).not.toMatch(/modelstub internal error/);
          // The varied script's `then: drop` resets the stream: grpc-js reports that as INTERNAL.
          if (a.code === Code.INTERNAL) expect(c.varied && /RST_STREAM/.test(a.details), what).toBe(true);
          expect(a.code === Code.UNKNOWN, what).toBe(false);
          const key = `${c.varied ? "varied" : "default"} ${c.method}: ${codeName(a.code)}`;
          codes.set(key, (codes.get(key) ?? 0) + 1);
        });
      }
      await checkAfterBatch(server, `random-requests batch ${batch}`);
    }
    console.log(
      `random requests: ${index}; statuses:\n${[...codes]
        .sort()
        .map(([k, n]) => `  ${k}: ${n}`)
        .join("\n")}`,
    );
  });
});
