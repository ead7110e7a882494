import type { ChannelCredentials } from "@grpc/grpc-js";
import type { ModelPort } from "../port/model-port.js";

/**
 * A ModelPort over gRPC to a modelstub server at `address` (`HOST:PORT`) that this process did
 * not start: one in a container, or started by the CLI. Insecure by default; pass grpc-js
 * credentials for a server started with TLS. Call close() when done.
 *
 * grpc-js is loaded at the port's first call, not when `modelstub` is imported (a test that
 * only uses the in-process port never loads it), so a bad `address` is reported by that call.
 */
export function createGrpcPort(address: string, credentials?: ChannelCredentials): ModelPort {
  let opened: ModelPort | undefined;
  let opening: Promise<ModelPort> | undefined;
  let closed = false;
  const open = (): Promise<ModelPort> =>
    (opening ??= import("../port/grpc-port.js").then(({ openGrpcPort }) => {
      opened = openGrpcPort(address, credentials);
      // Closed before grpc-js arrived: the channel is closed as soon as it exists, and the call
      // that opened it fails as a call on a closed port does.
      if (closed) opened.close();
      return opened;
    }));
  return {
    generate: async (request, options) => (await open()).generate(request, options),
    async *generateStream(request, options) {
      yield* (await open()).generateStream(request, options);
    },
    listModels: async (options) => (await open()).listModels(options),
    close() {
      closed = true;
      opened?.close();
    },
  };
}
