// Readiness probes for the start-up metric: the time from spawn until a server answers.
// Each polls a raw TCP connect first (grpc-js would back off a second after a refused connect),
// then asks over gRPC (or HTTP) until the answer is right.
import http from "node:http";
import net from "node:net";
import grpc from "@grpc/grpc-js";
import { HEALTH_CHECK_PATH, HTTP_HEALTH_PATH, HTTP_MODELS_PATH, LIST_MODELS_PATH } from "./paths.mjs";
import { sleep } from "./proc.mjs";

const pass = (b) => b;
const SERVING = Buffer.from([0x08, 0x01]);

function tcpOpen(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}

/** Polls a raw TCP connect to address until one is accepted; resolves with [host, port]. */
async function waitTcp(address, deadline) {
  const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
  while (!(await tcpOpen(host, port))) {
    if (performance.now() > deadline) throw new Error(`no TCP listener on ${address}`);
    await sleep(2);
  }
  return [host, port];
}

async function pollGrpc(address, deadline, path, request, okReply) {
  await waitTcp(address, deadline);
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  try {
    for (;;) {
      const reply = await new Promise((resolve) =>
        client.makeUnaryRequest(path, pass, pass, request, new grpc.Metadata(), { deadline: Date.now() + 1000, waitForReady: true }, (err, r) =>
          resolve(err ? null : r),
        ),
      );
      if (reply && okReply(reply)) return;
      if (performance.now() > deadline) throw new Error(`${path} on ${address} not ready`);
      await sleep(2);
    }
  } finally {
    client.close();
  }
}

/** One GET on a fresh connection: the status code, or null when the request failed. */
function httpGet(host, port, path) {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path, agent: false, headers: { connection: "close" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
      res.on("error", () => resolve(null));
    });
    req.setTimeout(1000, () => req.destroy());
    req.on("error", () => resolve(null));
  });
}

/** Polls GET `path` on address until it answers 200 (TCP connect first, as for gRPC). */
export async function pollHttp(address, path, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  const [host, port] = await waitTcp(address, deadline);
  for (;;) {
    if ((await httpGet(host, port, path)) === 200) return;
    if (performance.now() > deadline) throw new Error(`GET ${path} on ${address} did not answer 200`);
    await sleep(2);
  }
}

/** Probes by name. Each resolves when ready; rejects after timeoutMs. */
export const probes = {
  /** grpc.health.v1.Health/Check for the whole server ("") answers SERVING. */
  health: (_server, address, timeoutMs = 10_000) =>
    pollGrpc(address, performance.now() + timeoutMs, HEALTH_CHECK_PATH, Buffer.alloc(0), (r) => r.equals(SERVING)),
  /** modelstub.v1.ModelService/ListModels answers OK. */
  listModels: (_server, address, timeoutMs = 10_000) => pollGrpc(address, performance.now() + timeoutMs, LIST_MODELS_PATH, Buffer.alloc(0), () => true),
  /** GET /v1/models answers 200 (modelstub's HTTP front). */
  httpModels: (_server, address, timeoutMs = 10_000) => pollHttp(address, HTTP_MODELS_PATH, timeoutMs),
  /** GET /health answers 200 (the HTTP floor, mock-llm). */
  httpHealth: (_server, address, timeoutMs = 10_000) => pollHttp(address, HTTP_HEALTH_PATH, timeoutMs),
  /** A TCP connect is accepted (the empty Node listener: the same first step as every probe above). */
  tcp: (_server, address, timeoutMs = 10_000) => waitTcp(address, performance.now() + timeoutMs),
  /** The server printed the line with its address. */
  listeningLine: (server, _address, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${server.name}: no listening line`)), timeoutMs);
      const check = () => {
        if ([...server.stdout, ...server.stderr].some((l) => /listening on|listening","/.test(l))) return (clearTimeout(t), resolve());
        setTimeout(check, 1);
      };
      check();
    }),
};
