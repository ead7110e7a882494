import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServeProcess } from "../support/run-cli.js";
import { bufCurl } from "./serve-process-fixture.js";

describe("server reflection", () => {
  let server: Awaited<ReturnType<typeof startServeProcess>>;
  beforeAll(async () => {
    server = await startServeProcess(["--grpc", "127.0.0.1:0"]);
  });
  afterAll(async () => {
    server.child.kill("SIGTERM");
    await server.exit;
  });

  for (const version of ["grpc-v1", "grpc-v1alpha"]) {
    it(`lists every service and calls Generate and GenerateStream with JSON over ${version}, with no .proto`, async () => {
      const url = `http://${server.address}`;
      const list = await bufCurl(["--reflect-protocol", version, url, "--list-services"]);
      expect(list.stdout.trim().split("\n")).toEqual(["grpc.health.v1.Health", "modelstub.v1.ControlService", "modelstub.v1.ModelService"]);
      const methods = await bufCurl(["--reflect-protocol", version, url, "--list-methods"]);
      for (const m of ["modelstub.v1.ModelService/Generate", "modelstub.v1.ModelService/GenerateStream", "modelstub.v1.ControlService/GetEpisode"]) {
        expect(methods.stdout).toContain(m);
      }
      const body = JSON.stringify({ model: "m", messages: [{ role: "ROLE_USER", content: "PROBE-ECHO reflect" }] });
      const unary = await bufCurl(["--reflect-protocol", version, "-d", body, `${url}/modelstub.v1.ModelService/Generate`]);
      expect(unary.code).toBe(0);
      expect(JSON.parse(unary.stdout).message.content).toBe("PROBE-ECHO ok: PROBE-ECHO reflect");
      const stream = await bufCurl(["--reflect-protocol", version, "-d", body, `${url}/modelstub.v1.ModelService/GenerateStream`]);
      expect(stream.code).toBe(0);
      expect(stream.stdout).toContain('"textDelta": "PROBE-ECHO "');
      expect(stream.stdout).toContain('"finishReason": "FINISH_REASON_STOP"');
    });
  }
});
