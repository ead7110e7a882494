import { create } from "@bufbuild/protobuf";
import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from "@grpc/grpc-js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthListResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { Code } from "../shared/status-code.js";
import { serviceDefinition } from "./service-definition.js";

/** The services health answers for: "" is the whole server. */
export const healthServiceNames = ["", "modelstub.v1.ModelService", "modelstub.v1.ControlService"] as const;

/** The standard grpc.health.v1.Health service, with a status the server flips when it drains. */
export interface HealthState {
  set(status: "SERVING" | "NOT_SERVING"): void;
  addToServer(server: Server): void;
  /**
   * Ends every Watch (status OK, after the last status it sent): a watch never ends on its own,
   * and an open one would keep a graceful shutdown waiting for the whole grace period.
   */
  endWatches(): void;
}

/**
 * grpc.health.v1.Health (Check, Watch, List) served from our own generated descriptors through
 * the same adapter as every other service, so reflection describes exactly what is served.
 * Every name in `healthServiceNames` shares one status: the stub is healthy as a whole or not.
 */
export function createHealthState(initial: "SERVING" | "NOT_SERVING" = "SERVING"): HealthState {
  let status = ServingStatus[initial];
  const watchers = new Map<(s: ServingStatus) => void, () => void>();
  const known = new Set<string>(healthServiceNames);
  // Built once: a check answers with one of these, looked up, and does no other work, so a
  // loaded server's answer is late only by the calls queued on its event loop ahead of it.
  const answers = new Map<ServingStatus, HealthCheckResponse>(
    [ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVICE_UNKNOWN].map((s) => [s, create(HealthCheckResponseSchema, { status: s })]),
  );
  const response = (s: ServingStatus) => answers.get(s) ?? create(HealthCheckResponseSchema, { status: s });
  return {
    set(next) {
      const s = ServingStatus[next];
      if (s === status) return;
      status = s;
      for (const w of watchers.keys()) w(s);
    },
    endWatches() {
      for (const end of [...watchers.values()]) end();
      watchers.clear();
    },
    addToServer(server) {
      server.addService(serviceDefinition(Health), {
        Check(call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>) {
          if (!known.has(call.request.service)) {
            return callback({
              code: Code.NOT_FOUND,
              details: `unknown service ${JSON.stringify(call.request.service)}; known: ${[...known].map((k) => JSON.stringify(k)).join(", ")}`,
            });
          }
          callback(null, response(status));
        },
        Watch(call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
          if (!known.has(call.request.service)) {
            call.write(response(ServingStatus.SERVICE_UNKNOWN));
            return;
          }
          const watcher = (s: ServingStatus) => call.write(response(s));
          watchers.set(watcher, () => call.end());
          // Released whichever way the watch ends: cancel, deadline or server shutdown.
          call.on("cancelled", () => watchers.delete(watcher));
          call.on("close", () => watchers.delete(watcher));
          call.write(response(status));
        },
        List(_call: ServerUnaryCall<unknown, HealthListResponse>, callback: sendUnaryData<HealthListResponse>) {
          callback(null, create(HealthListResponseSchema, { statuses: Object.fromEntries([...known].map((k) => [k, response(status)])) }));
        },
      });
    },
  };
}
