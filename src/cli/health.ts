import { create } from "@bufbuild/protobuf";
import { credentials as grpcCredentials, makeGenericClientConstructor, type ChannelCredentials, type ChannelOptions, type ServiceError } from "@grpc/grpc-js";
import { readFile } from "node:fs/promises";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { parseDuration } from "../engine/parse-duration.js";
import { Code } from "../engine/status-code.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec, type ResolvedOptions } from "./options.js";

const specs: OptionSpec[] = [
  {
    name: "addr",
    env: "MODELSTUB_ADDR",
    type: "string",
    arg: "HOST:PORT",
    default: "127.0.0.1:50051",
    description: "Server to probe. Without it, the address `serve` reads from MODELSTUB_GRPC when that is set (0.0.0.0, :: and [::] probe the loopback), so a HEALTHCHECK needs no flags.",
  },
  { name: "service", type: "string", arg: "NAME", default: "", description: 'Service to ask about; "" is the whole server.' },
  { name: "timeout", type: "string", arg: "DURATION", default: "1s", description: "How long to wait for the connection and the answer." },
  { name: "tls", type: "boolean", description: "Connect with TLS. On by itself when MODELSTUB_TLS_CERT is set (the server's certificate, as `serve` reads it)." },
  {
    name: "tls-ca",
    env: "MODELSTUB_TLS_CA",
    type: "string",
    arg: "FILE",
    description:
      "PEM root certificate to trust with --tls. Default: the certificate in MODELSTUB_TLS_CERT when set (trusted as it is, whatever host name it carries, since the probe dials the server it names), else the system roots. Give the CA here for a CA-signed certificate.",
  },
  { name: "help", type: "boolean", description: "Print this help." },
];

const usage = `usage: modelstub health [options]

Probes grpc.health.v1.Health/Check, for Docker HEALTHCHECK and Kubernetes probes. Exit codes
follow grpc_health_probe: 0 SERVING, 1 bad arguments, 2 cannot connect, 3 the RPC failed,
4 not SERVING.

${formatOptionsHelp(specs)}
`;

const HealthClient = makeGenericClientConstructor(serviceDefinition(Health), "Health");

/** The address to probe for a server bound to `bind`: a wildcard bind is probed on the loopback. */
export function probeAddressOf(bind: string): string {
  const colon = bind.lastIndexOf(":");
  if (colon < 0) return bind;
  const host = bind.slice(0, colon);
  const port = bind.slice(colon + 1);
  if (host === "0.0.0.0" || host === "") return `127.0.0.1:${port}`;
  if (host === "::" || host === "[::]") return `[::1]:${port}`;
  return bind;
}

/**
 * The probe's target and credentials. Flags first, then MODELSTUB_ADDR / MODELSTUB_TLS_CA, then
 * what `serve` reads from the same environment (MODELSTUB_GRPC, MODELSTUB_TLS_CERT): in a
 * container the HEALTHCHECK probes the server the image configured, TLS included, with no flags.
 */
async function targetOf(
  options: ResolvedOptions,
  addrFromDefault: boolean,
  env: NodeJS.ProcessEnv,
): Promise<{ addr: string; creds: ChannelCredentials; channelOptions?: ChannelOptions }> {
  const addr = addrFromDefault && env["MODELSTUB_GRPC"] ? probeAddressOf(env["MODELSTUB_GRPC"]) : String(options["addr"]);
  const serverCert = env["MODELSTUB_TLS_CERT"] || undefined;
  if (!options["tls"] && !serverCert) return { addr, creds: grpcCredentials.createInsecure() };
  const ca = options["tls-ca"] as string | undefined;
  if (ca) return { addr, creds: grpcCredentials.createSsl(await readFile(ca)) };
  if (!serverCert) return { addr, creds: grpcCredentials.createSsl(null) };
  // Trusting exactly the server's own certificate: whichever name it was issued for, it is the
  // one the probe expects, so the host name check (which a loopback address would fail) is off.
  // A name for SNI keeps Node from warning about an IP address as the TLS server name.
  return {
    addr,
    creds: grpcCredentials.createSsl(await readFile(serverCert), null, null, { checkServerIdentity: () => undefined }),
    channelOptions: { "grpc.ssl_target_name_override": "localhost" },
  };
}

/** `modelstub health`. */
export async function health(argv: string[]): Promise<number> {
  let options;
  let sources;
  try {
    ({ options, sources } = resolveOptions(specs, argv));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub health: ${err.message}\n\n${usage}`);
      return 1;
    }
    throw err;
  }
  if (options["help"]) {
    process.stdout.write(usage);
    return 0;
  }
  const timeoutMs = parseDuration(String(options["timeout"]));
  if (timeoutMs === undefined) {
    process.stderr.write(`modelstub health: --timeout must be a duration like 1s or 500ms\n`);
    return 1;
  }
  let target: Awaited<ReturnType<typeof targetOf>>;
  try {
    target = await targetOf(options, sources["addr"] === "default", process.env);
  } catch (err) {
    process.stderr.write(`modelstub health: cannot read the certificate to trust: ${(err as Error).message}\n`);
    return 1;
  }
  const { addr, creds, channelOptions } = target;
  const client = new HealthClient(addr, creds, channelOptions) as unknown as {
    Check(r: unknown, o: object, cb: (e: ServiceError | null, r?: HealthCheckResponse) => void): void;
    waitForReady(deadline: number, cb: (e?: Error) => void): void;
    close(): void;
  };
  try {
    const deadline = Date.now() + timeoutMs;
    const connected = await new Promise<Error | undefined>((resolve) => client.waitForReady(deadline, (e) => resolve(e)));
    if (connected) {
      process.stderr.write(`modelstub health: cannot connect to ${addr} within ${timeoutMs} ms\n`);
      return 2;
    }
    const res = await new Promise<HealthCheckResponse | ServiceError>((resolve) =>
      client.Check(create(HealthCheckRequestSchema, { service: String(options["service"]) }), { deadline }, (e, r) => resolve(e ?? r!)),
    );
    if ("code" in res && typeof res.code === "number" && !("status" in res)) {
      const e = res as ServiceError;
      process.stderr.write(`modelstub health: Check failed: ${Object.keys(Code)[e.code] ?? e.code}: ${e.details}\n`);
      return 3;
    }
    const status = (res as HealthCheckResponse).status;
    process.stdout.write(`status: ${ServingStatus[status]}\n`);
    return status === ServingStatus.SERVING ? 0 : 4;
  } finally {
    client.close();
  }
}
