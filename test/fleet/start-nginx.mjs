// nginx as the fleet's balancer (fleet-test.mjs --proxy nginx): deploy/nginx/nginx.conf rendered
// and run as a child process, as fleet-lib.mjs runs HAProxy.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { exitOf, REPO, waitFor } from "./fleet-lib.mjs";

/** The nginx configuration under test: deploy/nginx/nginx.conf, or FLEET_NGINX_CONF. */
export const NGINX_CONF = process.env.FLEET_NGINX_CONF || path.join(REPO, "deploy/nginx/nginx.conf");

/**
 * Starts nginx in the foreground on deploy/nginx/nginx.conf, its ${...} names rendered (nginx
 * reads no environment) into `prefix`, after `nginx -t` accepted the rendered file; resolves
 * once both of its ports accept connections.
 */
export async function startNginx({ grpcBind, httpBind, prefix, instances, conf = NGINX_CONF }) {
  fs.mkdirSync(prefix, { recursive: true });
  fs.chmodSync(prefix, 0o777); // nginx started as root runs its worker as nobody, which writes temp files here
  const values = { FLEET_GRPC_BIND: grpcBind, FLEET_HTTP_BIND: httpBind, NGINX_PREFIX: prefix };
  instances.forEach((m, i) => {
    values[`MS${i + 1}_GRPC`] = m.grpc;
    values[`MS${i + 1}_HTTP`] = m.http.replace(/^http:\/\//, "");
  });
  const text = fs.readFileSync(conf, "utf8").replace(/\$\{([A-Z0-9_]+)\}/g, (_all, name) => {
    if (!(name in values)) throw new Error(`${conf}: no value for \${${name}}`);
    return values[name];
  });
  const rendered = path.join(prefix, "nginx.conf");
  fs.writeFileSync(rendered, text);
  const args = ["-p", prefix, "-c", rendered, "-e", "stderr"];
  const test = spawn("nginx", ["-t", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let testOut = "";
  test.stdout.on("data", (d) => (testOut += d));
  test.stderr.on("data", (d) => (testOut += d));
  const testCode = await exitOf(test);
  if (testCode !== 0) throw new Error(`nginx -t rejected ${rendered} (${testCode}):\n${testOut}`);
  const child = spawn("nginx", args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = exitOf(child);
  let died;
  exited.then((code) => (died = code));
  const accepts = (address) =>
    new Promise((resolve) => {
      const [host, port] = address.split(":");
      const socket = net.createConnection(Number(port), host);
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
  await waitFor("nginx's ports", async () => {
    if (died !== undefined) throw new Error(`nginx exited (${died}):\n${log}`);
    return (await accepts(grpcBind)) && (await accepts(httpBind));
  });
  return {
    pid: child.pid,
    log: () => log,
    exited,
    stop: () => {
      // Fast shutdown: a graceful one (SIGQUIT) would wait for calls a failed test left open.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
