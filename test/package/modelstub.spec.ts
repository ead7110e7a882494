// @ts-nocheck: the checkout's own type check cannot resolve "modelstub", only a project where the package is installed can. .ci/run.d/35-package.sh drops this first line when it copies the file into such a project, and type-checks it there, strictly.
// Runs in a fresh project outside the checkout, against the packed and installed package: only
// what `import ... from "modelstub"` and its `exports` give a user is reachable here.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EpisodeSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  ModelCallError,
  ModelService,
  Role,
  ScriptError,
  startServer,
  validateScript,
  type GenerateRequest,
  type GenerateResponse,
  type ScriptObject,
  type StubServer,
} from "modelstub";
import { RoleSchema } from "modelstub/proto";

const script = `
entries:
  - reply: "Hello, {{last_user}}."
  - reply: "Streamed reply."
    latency: { first_byte: 2s }
`;

/** A ModelService client built with this project's own grpc-js, as any user would. */
function rawClient(address: string) {
  const generate = ModelService.method.generate;
  const Ctor = makeGenericClientConstructor(
    {
      Generate: {
        path: `/${ModelService.typeName}/${generate.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (m: GenerateRequest) => Buffer.from(toBinary(GenerateRequestSchema, m)),
        requestDeserialize: (b: Buffer) => fromBinary(GenerateRequestSchema, b),
        responseSerialize: (m: GenerateResponse) => Buffer.from(toBinary(GenerateResponseSchema, m)),
        responseDeserialize: (b: Buffer) => fromBinary(GenerateResponseSchema, b),
      },
    },
    "ModelService",
  );
  const client = new Ctor(address, credentials.createInsecure());
  const call = (content: string, session: string) =>
    new Promise<GenerateResponse>((resolve, reject) => {
      const md = new Metadata();
      md.set("x-modelstub-session", session);
      const request = create(GenerateRequestSchema, { messages: [{ role: Role.USER, content }] });
      (client as unknown as Record<string, (...args: unknown[]) => void>)["Generate"]!.call(
        client,
        request,
        md,
        (err: ServiceError | null, res: GenerateResponse) => (err ? reject(err) : resolve(res)),
      );
    });
  return { call, close: () => client.close() };
}

let viaGrpc: StubServer;
let viaPort: StubServer;
beforeAll(async () => {
  [viaGrpc, viaPort] = await Promise.all([startServer({ script, clock: "virtual" }), startServer({ script, clock: "virtual", grpc: "127.0.0.1:0" })]);
});
afterAll(async () => {
  await Promise.all([viaGrpc?.close(), viaPort?.close()]);
});

describe("the installed package", () => {
  it("starts on a free port and gives the same episode bytes over grpc-js and in process", async () => {
    expect(viaGrpc.grpcAddress).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    const raw = rawClient(viaGrpc.grpcAddress);
    try {
      expect((await raw.call("Ada", "e2e")).message?.content).toBe("Hello, Ada.");
    } finally {
      raw.close();
    }
    let streamed = "";
    for await (const f of viaGrpc.client().generateStream({ messages: [{ role: Role.USER, content: "go" }] }, { session: "e2e" })) {
      if (f.frame.case === "textDelta") streamed += f.frame.value;
    }
    expect(streamed).toBe("Streamed reply.");

    const local = viaPort.inProcess();
    expect((await local.generate({ messages: [{ role: Role.USER, content: "Ada" }] }, { session: "e2e" })).message?.content).toBe("Hello, Ada.");
    let streamedLocally = "";
    for await (const f of local.generateStream({ messages: [{ role: Role.USER, content: "go" }] }, { session: "e2e" })) {
      if (f.frame.case === "textDelta") streamedLocally += f.frame.value;
    }
    expect(streamedLocally).toBe(streamed);

    const a = viaGrpc.control.episodeBytes("e2e");
    const b = viaPort.control.episodeBytes("e2e");
    expect(a.length).toBeGreaterThan(0);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect(fromBinary(EpisodeSchema, a).calls).toHaveLength(2);
  });

  it("fails a call with a ModelCallError and an invalid script with the CLI's diagnostics", async () => {
    const err = await viaGrpc
      .client()
      .generate({}, { session: "bad name" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    await expect(viaGrpc.control.loadScript("s", "entries:\n  - reply: 1\n")).rejects.toBeInstanceOf(ScriptError);
    expect(validateScript("entries:\n  - reply: 1\n", "s.yaml")).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^s\.yaml:2:\d+: entries\[0\]\.reply: /)],
    });
    // The installed types name codes by CodeName: this fixture's strict tsc fails if a misspelt one compiles.
    // @ts-expect-error -- "UNAVAILIBLE" is not a CodeName
    const misspelt: ScriptObject = { entries: [{ error: { code: "UNAVAILIBLE" } }] };
    expect(validateScript(misspelt).ok).toBe(false);
  });

  it("ships the JSON Schema at modelstub/schema.json, the same as `modelstub schema` prints", () => {
    const require = createRequire(import.meta.url);
    const path = require.resolve("modelstub/schema.json");
    expect(path.endsWith("node_modules/modelstub/modelstub.schema.json")).toBe(true);
    const printed = execFileSync(join(process.cwd(), "node_modules/.bin/modelstub"), ["schema"], { encoding: "utf8" });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(JSON.parse(printed));
    expect(RoleSchema.typeName).toBe("modelstub.v1.Role");
  });
});
