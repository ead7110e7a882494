import { Server, ServerCredentials, type ChannelOptions } from "@grpc/grpc-js";
import { refuseBusyPort } from "./refuse-busy-port.js";
import { ControlService } from "../../gen/modelstub/v1/control_pb.js";
import { ModelService, type GenerateResponse } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import type { Logger } from "../log/create-logger.js";
import { controlServiceHandlers } from "./control-service.js";
import { createHealthState, type HealthState } from "./health-service.js";
import { addReflection } from "./reflection-service.js";
import { modelServiceHandlers } from "./model-service.js";
import { encodeResponse } from "../engine/encode-episode.js";
import { sendStreamFrame } from "../wire/encode-stream-frame.js";
import { serviceDefinition } from "./service-definition.js";
import { modelRequestChecks } from "./limit-request.js";
import { decodeGenerateRequest, decodeGenerateStreamRequest } from "../wire/decode-generate-request.js";
import { deferringLarge } from "./deferred-request.js";
import { watchLoop } from "./loop-watch.js";
import { holdScriptCompiler } from "../script/script-compiler.js";
import { instanceInterceptor } from "./answer-headers.js";

/** Options of the gRPC server. */
export interface GrpcServerOptions {
  stub: Stub;
  /** HOST:PORT; port 0 picks a free one. Default 127.0.0.1:50051. */
  address?: string;
  credentials?: ServerCredentials;
  channelOptions?: ChannelOptions;
  /** Adds more services before the server binds. */
  extend?: (server: Server) => void;
  /** Required on ControlService calls as `authorization: Bearer <token>` when set. */
  controlToken?: string;
  /** Server reflection (v1 and v1alpha); default on, so grpcurl needs no .proto. */
  reflection?: boolean;
  /** Receives one record per model call. */
  logger?: Logger;
  /** The health service's state; default: a new one, SERVING once bound. */
  health?: HealthState;
}

/** A started gRPC server. */
export interface RunningGrpcServer {
  server: Server;
  /** The bound port (useful with port 0). */
  port: number;
  /** HOST:PORT as bound. */
  address: string;
  /** grpc.health.v1.Health's state: set NOT_SERVING to drain. */
  health: HealthState;
  /** Stops accepting calls, waits for calls in flight up to `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Splits HOST:PORT, accepting `[::1]:50051` for IPv6. */
export function splitAddress(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(address);
  if (!m || Number(m[2]) > 65535) throw new Error(`invalid address ${JSON.stringify(address)}: expected HOST:PORT, like 127.0.0.1:50051`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * How many stream resets (RST_STREAM: a client's cancel, or its deadline passing) one connection
 * may send: a burst of 10,000, refilled at 5,000 a second. nghttp2's own rapid-reset guard
 * (CVE-2023-44487) allows 1,000 and 33 a second, then drops the connection with every call on it
 * (clients see INTERNAL "Received RST_STREAM with code 2"): a test suite that cancels or times out
 * thousands of calls on one channel reaches that in a second. Node sets it from 22.10 on
 * (`streamResetBurst`, `streamResetRate`); Node 20 has no such option, and keeps nghttp2's.
 */
export const streamResetLimit = { burst: 10_000, perSecond: 5_000 } as const;

/** Whether this Node passes `streamResetBurst`/`streamResetRate` to nghttp2 (22.10 and later). */
export function nodeSetsStreamResetLimit(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 10);
}

/**
 * grpc-js passes no such option through, but builds its HTTP/2 servers at bind time from the
 * options it keeps in `commonServerOptions`: add them there. Without that field (a later grpc-js),
 * nghttp2's default stays, as on Node 20.
 */
function raiseStreamResetLimit(server: Server): void {
  const common = (server as unknown as { commonServerOptions?: unknown }).commonServerOptions;
  if (typeof common !== "object" || common === null) return;
  Object.assign(common, { streamResetBurst: streamResetLimit.burst, streamResetRate: streamResetLimit.perSecond });
}

/** A Generate reply for the wire: the bytes its episode call was recorded with, when it was. */
function sendResponse(response: GenerateResponse): Buffer {
  const bytes = encodeResponse(response);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Starts ModelService and ControlService on `options.address`. Rejects on a busy or bad address. */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const address = options.address ?? "127.0.0.1:50051";
  const { host } = splitAddress(address);
  // Channelz stays on, though a stub needs none of it: with "grpc.enable_channelz": 0, grpc-js
  // 1.14.7 stops tracking sessions in the set forceShutdown() destroys (its non-channelz session
  // handler never adds them), so a shutdown past the grace period leaves calls hanging and the
  // process never exits. The graceful-shutdown test catches that. Its cost per call is not
  // measurable beside the machine's scatter (bench/README.md, "Channelz").
  // Every answer says which instance gave it (answer-headers.ts), health and reflection included.
  const server = new Server({ ...options.channelOptions, interceptors: [instanceInterceptor(options.stub.instance)] });
  raiseStreamResetLimit(server);
  // Requests past the request limits are refused before they are decoded (limit-request.ts);
  // the rest are decoded by hand, fromBinary's result exactly (wire/decode-generate-request.ts).
  server.addService(
    serviceDefinition(ModelService, { Generate: sendResponse, GenerateStream: sendStreamFrame }, modelRequestChecks(), {
      Generate: deferringLarge(decodeGenerateRequest),
      GenerateStream: deferringLarge(decodeGenerateStreamRequest),
    }),
    modelServiceHandlers(options.stub, options.logger),
  );
  // Held until close(): LoadScript and SetFaultPlan check their texts in its worker.
  const compiler = holdScriptCompiler();
  const watches = new Set<() => void>();
  server.addService(serviceDefinition(ControlService), controlServiceHandlers(options.stub, options.controlToken, compiler, watches));
  const health = options.health ?? createHealthState("NOT_SERVING");
  health.addToServer(server);
  if (options.reflection ?? true) addReflection(server);
  options.extend?.(server);
  const bind = () =>
    new Promise<number>((resolve, reject) => {
      server.bindAsync(address, options.credentials ?? ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
    });
  // A busy port is refused before grpc-js logs its own line about it (refuse-busy-port.ts).
  const port = await refuseBusyPort(host, splitAddress(address).port)
    .then(bind)
    .catch(async (err: unknown) => {
      await compiler.release();
      throw err;
    });
  // Deadlines are judged on the caller's timeline: the loop watch measures the stalls between.
  const unwatch = watchLoop();
  // The script was loaded before the server was created: bound means ready.
  if (!options.health) health.set("SERVING");
  return {
    server,
    health,
    port,
    address: `${host}:${port}`,
    close(graceMs = 5000) {
      health.endWatches();
      for (const end of [...watches]) end();
      return new Promise<void>((resolve) => {
        // Resolves once the compile worker, if this server held it last, has ended too.
        const timer = setTimeout(() => {
          server.forceShutdown();
          unwatch();
          void compiler.release().then(resolve);
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          unwatch();
          void compiler.release().then(resolve);
        });
      });
    },
  };
}
