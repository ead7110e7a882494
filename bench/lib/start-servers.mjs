// The servers the bench starts: startFloor, startModelstub, startGripmock, startHttpFloor, startModelstubHttp, startMockLlm.
import fs from "node:fs";
import path from "node:path";
import { CACHE_DIR, FLOOR_SERVER, HTTP_FLOOR_SERVER, MODELSTUB_BIN, PEER_DIR } from "./paths.mjs";
import { gripmockStreamStub } from "./payloads.mjs";
import { freePort, startServer } from "./proc.mjs";
import { probes } from "./ready.mjs";
import { gripmock, mockLlm, payloads } from "./bench-setup.mjs";

// ---------------------------------------------------------------------------------------------
// Servers.

export async function startFloor(unary = "constant", port = 0) {
  return startServer({
    name: `floor(${unary})`,
    node: true,
    nodeArgs: ["--expose-gc"],
    args: [FLOOR_SERVER, "--payloads", payloads.file, "--port", String(port), "--unary", unary],
  });
}

export async function startModelstub(script, { clock } = {}) {
  const port = await freePort();
  // Load runs make millions of calls in one session: lift the episode cap (memory is measured).
  const args = [MODELSTUB_BIN, "serve", "--script", script, "--grpc", `127.0.0.1:${port}`, "--max-episode-calls", "100000000"];
  if (clock) args.push("--clock", clock);
  const s = await startServer({ name: "modelstub", node: true, nodeArgs: ["--expose-gc"], args, timeoutMs: 30_000 });
  s.address ??= `127.0.0.1:${port}`;
  return s;
}

/** GripMock on peer/stubs (the unary reply), or on `stubDir`. */
export async function startGripmock({ waitReady = true, stubDir = path.join(PEER_DIR, "stubs") } = {}) {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const s = await startServer({
    name: "gripmock",
    cmd: gripmock.bin,
    args: ["--stub", stubDir, path.join(PEER_DIR, "model.proto")],
    env: {
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(grpcPort),
      HTTP_HOST: "127.0.0.1",
      HTTP_PORT: String(httpPort),
      LOG_LEVEL: "error",
      STUB_WATCHER_ENABLED: "false",
    },
    readyLine: null,
  });
  s.address = `127.0.0.1:${grpcPort}`;
  if (waitReady) await probes.health(s, s.address, 30_000);
  return s;
}

/** GripMock on a stub dir of its own holding the stream section's stub (gripmockStreamStub). */
export async function startGripmockStream() {
  const stubDir = path.join(CACHE_DIR, "gripmock-stream-stubs");
  fs.mkdirSync(stubDir, { recursive: true });
  fs.writeFileSync(path.join(stubDir, "generate-stream.yaml"), gripmockStreamStub());
  return startGripmock({ stubDir });
}

// HTTP targets: the floor (bare node:http), modelstub's HTTP front, mock-llm. Each resolves once
// listening (waitReady) or right after spawn (for the start-up metric, which probes itself).

export async function startHttpFloor(replyFile, { waitReady = true } = {}) {
  const port = await freePort();
  const s = await startServer({
    name: "http-floor",
    node: true,
    nodeArgs: ["--expose-gc"],
    args: [HTTP_FLOOR_SERVER, "--reply", replyFile, "--port", String(port)],
    readyLine: waitReady ? /listening on (\S+)/ : null,
  });
  s.address = `127.0.0.1:${port}`;
  return s;
}

export async function startModelstubHttp(script, { waitReady = true } = {}) {
  const port = await freePort();
  // gRPC on a port of its own choosing (it is always served); HTTP is what is measured. The
  // episode cap is lifted as in startModelstub.
  const args = [MODELSTUB_BIN, "serve", "--script", script, "--grpc", "127.0.0.1:0", "--http", `127.0.0.1:${port}`, "--max-episode-calls", "100000000"];
  const s = await startServer({
    name: "modelstub(http)",
    node: true,
    nodeArgs: ["--expose-gc"],
    args,
    readyLine: waitReady ? /HTTP listening(?: on |","url":")http:\/\/([^\s"]+)/ : null,
    timeoutMs: 30_000,
  });
  s.address = `127.0.0.1:${port}`;
  return s;
}

/** mock-llm with its default configuration: cwd is an empty directory, so no mock-llm.yaml. */
export async function startMockLlm(cwd, { waitReady = true } = {}) {
  const port = await freePort();
  const s = await startServer({
    name: "mock-llm",
    node: true,
    nodeArgs: ["--expose-gc"],
    args: [mockLlm.main],
    cwd,
    env: { HOST: "127.0.0.1", PORT: String(port) },
    readyLine: waitReady ? /server running on (\S+)/ : null,
    timeoutMs: 30_000,
  });
  s.address = `127.0.0.1:${port}`;
  return s;
}
