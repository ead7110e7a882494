import { create } from "@bufbuild/protobuf";
import { makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { parseDuration } from "../script/parse-duration.js";
import { Code } from "../shared/status-code.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { clientOptions, clientTarget, type ClientTarget } from "./client-target.js";
import { formatOptionsHelp, resolveOptions, UsageError, type OptionSpec } from "./options.js";

const [addrOption, ...tlsOptions] = clientOptions("Server to probe.");
const specs = [
  addrOption!,
  { name: "service", type: "string", arg: "NAME", default: "", description: 'Service to ask about; "" is the whole server.' },
  { name: "timeout", type: "string", arg: "DURATION", default: "1s", description: "How long to wait for the connection and the answer." },
  ...tlsOptions,
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

const usage = `usage: modelstub health [options]

Probes grpc.health.v1.Health/Check, for Docker HEALTHCHECK and Kubernetes probes. Exit codes
follow grpc_health_probe: 0 SERVING, 1 bad arguments, 2 cannot connect, 3 the RPC failed,
4 not SERVING.

${formatOptionsHelp(specs)}
`;

const HealthClient = makeGenericClientConstructor(serviceDefinition(Health), "Health");

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
  const timeoutMs = parseDuration(options["timeout"]);
  if (timeoutMs === undefined) {
    process.stderr.write(`modelstub health: --timeout must be a duration like 1s or 500ms\n`);
    return 1;
  }
  let target: ClientTarget;
  try {
    target = await clientTarget(options, sources["addr"] === "default", process.env);
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
      client.Check(create(HealthCheckRequestSchema, { service: options["service"] }), { deadline }, (e, r) => resolve(e ?? r!)),
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
