import { createRealClock, createVirtualClock } from "../engine/clock.js";
import { createStub } from "../engine/create-stub.js";
import { startFronts } from "../server/start-fronts.js";
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
  const fronts = await startFronts({ stub, grpc: { address: "127.0.0.1:0", logger }, http: { address: "127.0.0.1:0" } });
  return {
    grpcAddress: fronts.grpc!.address,
    httpUrl: `http://${fronts.http!.address}`,
    close: () => fronts.close(1000),
  };
}
