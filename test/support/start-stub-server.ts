import { createVirtualClock, createRealClock, type Clock } from "../../src/engine/clock.js";
import { createStub, type Stub, type StubOptions } from "../../src/engine/create-stub.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { startGrpcServer, type RunningGrpcServer } from "../../src/grpc/start-grpc-server.js";
import { createControlClient, type ControlClient } from "../../src/port/control-client.js";
import { openGrpcPort } from "../../src/port/grpc-port.js";
import type { ModelPort } from "../../src/index.js";
import { testTimeoutMs } from "./test-timeout.js";
import { Client, credentials } from "@grpc/grpc-js";

/** A real server on 127.0.0.1:0 with a real gRPC client, for tests. */
export interface StubServer {
  stub: Stub;
  server: RunningGrpcServer;
  address: string;
  port: ModelPort;
  control: ControlClient;
  /** A grpc-js client of this server for bytes as they are (serializers: rawBytes); made on first use, closed by close(). */
  rawClient(): Client;
  close(): Promise<void>;
}

/** The serializer of a raw client's calls: a request sent as the bytes given, an answer taken as its bytes. */
export const rawBytes = (b: Buffer) => b;

/** Starts a stub serving `scriptText` over gRPC on a free loopback port. */
export async function startStubServer(
  scriptText: string,
  opts: { clock?: "real" | "virtual" | Clock } & Omit<Partial<StubOptions>, "clock" | "script"> = {},
): Promise<StubServer> {
  const clock = typeof opts.clock === "object" ? opts.clock : opts.clock === "virtual" ? createVirtualClock() : createRealClock();
  const stub = createStub({ ...opts, script: loadScriptText(scriptText, "test.yaml"), clock });
  const server = await startGrpcServer({ stub, address: "127.0.0.1:0" });
  const port = openGrpcPort(server.address);
  // A control call's deadline rises with the suite's timeout: 10 s was crossed at load 30.
  const control = createControlClient(server.address, { timeoutMs: testTimeoutMs(10_000) });
  let raw: Client | undefined;
  return {
    stub,
    server,
    address: server.address,
    port,
    control,
    rawClient: () => (raw ??= new Client(server.address, credentials.createInsecure())),
    async close() {
      raw?.close();
      port.close();
      control.close();
      await server.close(1000);
    },
  };
}
