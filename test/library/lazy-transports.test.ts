// Importing the library costs only what a test uses (issue 31): `import("modelstub")` and the
// in-process port load no gRPC (grpc-js, its reflection, proto-loader, protobufjs); a server with
// gRPC loads it, which shows the check sees it when it is there. Each case is a fresh Node
// process importing the built package by its name (package.json "exports", as a user's test
// does; `npm test` builds first), and reads which CommonJS files it loaded: every file of those
// packages, imported or required, lands in Node's one CommonJS cache.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repoRoot = new URL("../../", import.meta.url).pathname;

/** Runs `body` after `import("modelstub")` in a new process; resolves with the @grpc/ and protobufjs files it loaded. */
async function grpcFilesLoadedBy(body: string): Promise<string[]> {
  const program = `
    import { createRequire } from "node:module";
    const modelstub = await import("modelstub");
    ${body}
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /[\\\\/]node_modules[\\\\/](@grpc[\\\\/]|protobufjs[\\\\/])/.test(f));
    console.log(JSON.stringify(loaded));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", program], { cwd: repoRoot });
  return JSON.parse(stdout.trim().split("\n").pop()!) as string[];
}

describe("what importing modelstub loads", () => {
  it("loads no gRPC package on import", async () => {
    expect(await grpcFilesLoadedBy("")).toEqual([]);
  });

  it("loads no gRPC package for the in-process port, scripts and control of a server started with grpc: false", async () => {
    const loaded = await grpcFilesLoadedBy(`
      const { Role, loadScript, startServer, validateScript } = modelstub;
      if (!validateScript("entries:\\n  - reply: Hi\\n").ok) throw new Error("validateScript");
      const server = await startServer({ grpc: false, clock: "virtual", script: loadScript("entries:\\n  - reply: Hello.\\n    repeat: true\\n") });
      const reply = await server.inProcess().generate({ messages: [{ role: Role.USER, content: "hi" }] }, { session: "s" });
      if (reply.message?.content !== "Hello.") throw new Error("unexpected reply " + reply.message?.content);
      for await (const frame of server.inProcess().generateStream({}, { session: "s" })) void frame;
      await server.control.loadScript("s", "entries:\\n  - reply: Again.\\n");
      if (server.control.episode("s").calls.length !== 0 || server.grpcAddress !== "") throw new Error("unexpected episode or address");
      await server.close();
    `);
    expect(loaded).toEqual([]);
  });

  it("loads no gRPC package for a createGrpcPort that is never called", async () => {
    expect(await grpcFilesLoadedBy(`modelstub.createGrpcPort("127.0.0.1:1").close();`)).toEqual([]);
  });

  it("loads grpc-js once a server serves gRPC (the check sees it when it is there)", async () => {
    const loaded = await grpcFilesLoadedBy(`
      const server = await modelstub.startServer({ clock: "virtual" });
      await server.client().generate({}, { session: "s" });
      await server.close();
    `);
    expect(loaded.some((f) => /[\\/]@grpc[\\/]grpc-js[\\/]/.test(f))).toBe(true);
  });
});
