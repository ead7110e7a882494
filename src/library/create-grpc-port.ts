import type { ChannelCredentials } from "@grpc/grpc-js";
import { createGrpcPort as createEnginePort } from "../port/grpc-port.js";
import { acceptRequestInit, type ModelPort } from "./model-port.js";

/**
 * A ModelPort over gRPC to a modelstub server at `address` (`HOST:PORT`) that this process did
 * not start: one in a container, or started by the CLI. Insecure by default; pass grpc-js
 * credentials for a server started with TLS. Call close() when done.
 */
export function createGrpcPort(address: string, credentials?: ChannelCredentials): ModelPort {
  return acceptRequestInit(createEnginePort(address, credentials));
}
