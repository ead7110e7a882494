import type { Stub } from "../engine/create-stub.js";
import type { GrpcServerOptions, RunningGrpcServer } from "../grpc/start-grpc-server.js";
import type { HttpServerOptions, RunningHttpServer } from "../http/start-http-server.js";
import { errorText } from "../shared/status-error.js";

/** What startFronts() serves: each front's own options (its address required), or none of it. */
export interface FrontsOptions {
  stub: Stub;
  /** The gRPC server (ModelService, ControlService, health, reflection); absent: none, and grpc-js is not loaded. */
  grpc?: Omit<GrpcServerOptions, "stub"> & { address: string };
  /** The HTTP front; absent: none, and it is not loaded. */
  http?: Omit<HttpServerOptions, "stub"> & { address: string };
}

/** The fronts startFronts() started, listening. */
export interface Fronts {
  grpc: RunningGrpcServer | undefined;
  http: RunningHttpServer | undefined;
  /** Closes both, each letting what is in flight finish for up to `graceMs`. */
  close(graceMs: number): Promise<void>;
}

/** A front that could not listen: which, where, and the error it got (a busy port, a bad address). */
export class ListenError extends Error {
  constructor(
    readonly front: "grpc" | "http",
    readonly address: string,
    readonly error: unknown,
  ) {
    super(`cannot listen on ${address}: ${errorText(error)}`, { cause: error });
  }
}

/**
 * Starts the gRPC server, then the HTTP front, over one stub: what `modelstub serve`, the
 * library's startServer(), `modelstub record` and `matrix run` all serve. Rejects with a
 * ListenError when a front cannot listen, and then leaves nothing listening. Each front's module
 * is imported here, when it is asked for: a library user with `grpc: false` never loads grpc-js
 * (docs/library.md, "What loads when").
 */
export async function startFronts(options: FrontsOptions): Promise<Fronts> {
  const { stub } = options;
  const [grpcModule, httpModule] = await Promise.all([
    options.grpc ? import("../grpc/start-grpc-server.js") : undefined,
    options.http ? import("../http/start-http-server.js") : undefined,
  ]);
  let grpc: RunningGrpcServer | undefined;
  if (options.grpc) {
    try {
      grpc = await grpcModule!.startGrpcServer({ ...options.grpc, stub });
    } catch (err) {
      throw new ListenError("grpc", options.grpc.address, err);
    }
  }
  let http: RunningHttpServer | undefined;
  if (options.http) {
    try {
      http = await httpModule!.startHttpServer({ ...options.http, stub });
    } catch (err) {
      await grpc?.close(0);
      throw new ListenError("http", options.http.address, err);
    }
  }
  return {
    grpc,
    http,
    close: async (graceMs) => {
      await Promise.all([grpc?.close(graceMs), http?.close(graceMs)]);
    },
  };
}
