import { createRealClock, createVirtualClock } from "../engine/clock.js";
import { createStub } from "../engine/create-stub.js";
import { startGrpcServer } from "../grpc/start-grpc-server.js";
import { startHttpServer } from "../http/start-http-server.js";
import { createLogger } from "../log/create-logger.js";
import type { CompiledScript } from "../script/compiled-script.js";

/** A server `matrix run` started for itself. */
export interface MatrixServer {
  grpcAddress: string;
  /** `http://127.0.0.1:PORT`: the HTTP front's base URL (dialects under /v1). */
  httpUrl: string;
  close(): Promise<void>;
}

/**
 * Serves `script` on 127.0.0.1 (gRPC and the HTTP front, free ports) for a matrix run. The real
 * clock by default: a crash plan's held call must stay held until the runner has killed
 * COMMAND, and on the virtual clock a held call with a deadline ends at once.
 */
export async function serveScript(script: CompiledScript, clock: "real" | "virtual" = "real"): Promise<MatrixServer> {
  const logger = createLogger({ level: "silent", format: "text" });
  const stub = createStub({ script, clock: clock === "virtual" ? createVirtualClock() : createRealClock() });
  const grpc = await startGrpcServer({ stub, address: "127.0.0.1:0", logger });
  let http;
  try {
    http = await startHttpServer({ stub, address: "127.0.0.1:0" });
  } catch (err) {
    await grpc.close(0);
    throw err;
  }
  return {
    grpcAddress: grpc.address,
    httpUrl: `http://${http.address}`,
    async close() {
      await Promise.all([grpc.close(1000), http.close(1000)]);
    },
  };
}
