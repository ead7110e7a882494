import { create, type DescMessage } from "@bufbuild/protobuf";
import { credentials as grpcCredentials, makeGenericClientConstructor, Metadata, type ChannelCredentials, type Client, type ServiceError } from "@grpc/grpc-js";
import { ControlService } from "../../gen/modelstub/v1/control_pb.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { ModelCallError } from "./model-port.js";

const ControlClientCtor = makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");

/** A promise-returning ControlService client: `call("GetEpisode", {session})`. */
export interface ControlClient {
  call<T = unknown>(method: "LoadScript" | "GetEpisode" | "ResetSession" | "VerifySession" | "ListSessions", request: object, options?: { timeoutMs?: number }): Promise<T>;
  close(): void;
}

/** Connects a ControlService client; `token` is sent as `authorization: Bearer <token>`. */
export function createControlClient(address: string, opts: { token?: string; credentials?: ChannelCredentials } = {}): ControlClient {
  const client = new ControlClientCtor(address, opts.credentials ?? grpcCredentials.createInsecure()) as unknown as Client &
    Record<string, (req: object, md: Metadata, o: object, cb: (e: ServiceError | null, r: unknown) => void) => void>;
  return {
    call(method, request, options) {
      const md = new Metadata();
      if (opts.token) md.set("authorization", `Bearer ${opts.token}`);
      return new Promise((resolve, reject) => {
        // Plain objects are welcome: they become the method's request message here.
        const input = ControlService.methods.find((m) => m.name === method)!.input as DescMessage;
        client[method]!(create(input, request as never), md, { deadline: Date.now() + (options?.timeoutMs ?? 10_000) }, (err, res) =>
          err ? reject(new ModelCallError(err.code, err.details)) : resolve(res as never),
        );
      });
    },
    close: () => client.close(),
  };
}
