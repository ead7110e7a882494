import { Server, ServerCredentials, type ChannelOptions } from "@grpc/grpc-js";
import { ControlService } from "../../gen/modelstub/v1/control_pb.js";
import { ModelService } from "../../gen/modelstub/v1/model_pb.js";
import type { Stub } from "../engine/create-stub.js";
import { controlServiceHandlers } from "./control-service.js";
import { modelServiceHandlers } from "./model-service.js";
import { serviceDefinition } from "./service-definition.js";

/** Options of the gRPC server. */
export interface GrpcServerOptions {
  stub: Stub;
  /** HOST:PORT; port 0 picks a free one. Default 127.0.0.1:50051. */
  address?: string;
  credentials?: ServerCredentials;
  channelOptions?: ChannelOptions;
  /** Adds more services (health, reflection) before the server binds. */
  extend?: (server: Server) => void;
}

/** A started gRPC server. */
export interface RunningGrpcServer {
  server: Server;
  /** The bound port (useful with port 0). */
  port: number;
  /** HOST:PORT as bound. */
  address: string;
  /** Stops accepting calls, waits for calls in flight up to `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Splits HOST:PORT, accepting `[::1]:50051` for IPv6. */
export function splitAddress(address: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(address);
  if (!m || Number(m[2]) > 65535) throw new Error(`invalid address ${JSON.stringify(address)}: expected HOST:PORT, like 127.0.0.1:50051`);
  return { host: m[1]!, port: Number(m[2]) };
}

/** Starts ModelService and ControlService on `options.address`. Rejects on a busy or bad address. */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const address = options.address ?? "127.0.0.1:50051";
  const { host } = splitAddress(address);
  const server = new Server(options.channelOptions);
  server.addService(serviceDefinition(ModelService), modelServiceHandlers(options.stub));
  server.addService(serviceDefinition(ControlService), controlServiceHandlers(options.stub));
  options.extend?.(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, options.credentials ?? ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    server,
    port,
    address: `${host}:${port}`,
    close(graceMs = 5000) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
