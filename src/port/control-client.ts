import { create, type DescMessage } from "@bufbuild/protobuf";
import {
  credentials as grpcCredentials,
  makeGenericClientConstructor,
  Metadata,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  type ServiceError,
} from "@grpc/grpc-js";
import { ControlService, ExportEpisodeRequestSchema, type ExportEpisodeResponse, type ListSessionsResponse, type SessionInfo } from "../../gen/modelstub/v1/control_pb.js";
import { Code } from "../shared/status-code.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { ModelCallError } from "./model-port.js";

const ControlClientCtor = makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");

/** An episode fetched through ExportEpisode: its deterministic bytes and how many calls they hold. */
export interface ExportedEpisode {
  bytes: Uint8Array;
  calls: number;
}

/** A promise-returning ControlService client: `call("GetEpisode", {session})`. */
export interface ControlClient {
  call<T = unknown>(method: "LoadScript" | "SetFaultPlan" | "GetEpisode" | "ResetSession" | "DeleteSession" | "VerifySession" | "ListSessions", request: object, options?: { timeoutMs?: number }): Promise<T>;
  /**
   * Fetches a session's episode bytes through the streamed ExportEpisode and reassembles them,
   * checking the total the server announced: works for an episode of any size with the default
   * 4 MiB receive limit. `timeoutMs` bounds the whole export (default 60 s: 64 MiB on a slow link).
   * Rejects with a ModelCallError: the call's status, or DATA_LOSS when the chunks do not add up.
   */
  exportEpisode(session: string, options?: { timeoutMs?: number }): Promise<ExportedEpisode>;
  /** The sessions the server keeps (ListSessions), sorted by name. */
  listSessions(options?: { timeoutMs?: number }): Promise<SessionInfo[]>;
  /**
   * Resolves once the channel is connected, or rejects within `timeoutMs` (with the reason
   * grpc-js gives): tells "no server there" apart from a call the server answered with an error.
   */
  ready(timeoutMs: number): Promise<void>;
  close(): void;
}

type StreamingMethod = (req: object, md: Metadata, o: object) => ClientReadableStream<ExportEpisodeResponse>;

/** Collects an ExportEpisode stream into one buffer of the announced size. */
function reassemble(stream: ClientReadableStream<ExportEpisodeResponse>): Promise<ExportedEpisode> {
  return new Promise((resolve, reject) => {
    let out: Uint8Array | undefined;
    let calls = 0;
    let received = 0;
    const fail = (details: string) => {
      stream.removeAllListeners("data");
      stream.cancel();
      reject(new ModelCallError(Code.DATA_LOSS, `ExportEpisode: ${details}`));
    };
    stream.on("data", (m: ExportEpisodeResponse) => {
      // The first message announces the total: allocate once, then copy each chunk in place.
      if (!out) {
        try {
          out = new Uint8Array(m.totalBytes);
        } catch (err) {
          return fail(`cannot hold the ${m.totalBytes} bytes announced: ${(err as Error).message}`);
        }
        calls = m.calls;
      }
      if (received + m.chunk.length > out.length) return fail(`received more than the ${out.length} bytes announced`);
      out.set(m.chunk, received);
      received += m.chunk.length;
    });
    stream.on("error", (err: ServiceError) => reject(new ModelCallError(err.code, err.details)));
    stream.on("end", () => {
      if (!out) return fail("the stream ended without a message");
      if (received !== out.length) return fail(`received ${received} of the ${out.length} bytes announced`);
      resolve({ bytes: out, calls });
    });
  });
}

/**
 * Connects a ControlService client; `token` is sent as `authorization: Bearer <token>`.
 * `credentials` and `channelOptions` are for TLS (default: plaintext).
 */
export function createControlClient(address: string, opts: { token?: string; credentials?: ChannelCredentials; channelOptions?: ChannelOptions } = {}): ControlClient {
  const client = new ControlClientCtor(address, opts.credentials ?? grpcCredentials.createInsecure(), opts.channelOptions) as unknown as Client &
    Record<string, (req: object, md: Metadata, o: object, cb: (e: ServiceError | null, r: unknown) => void) => void>;
  /**
   * A call about one session also carries it as `x-modelstub-session` metadata, as model calls
   * do: a balancer that hashes the header (docs/deploy.md) then sends LoadScript, GetEpisode,
   * Reset and Verify to the instance that holds the session. The server reads the body's.
   */
  const metadata = (session?: unknown) => {
    const md = new Metadata();
    if (opts.token) md.set("authorization", `Bearer ${opts.token}`);
    if (typeof session === "string" && session !== "" && /^[\x20-\x7e]*$/.test(session)) md.set("x-modelstub-session", session);
    return md;
  };
  const control: ControlClient = {
    call(method, request, options) {
      return new Promise((resolve, reject) => {
        // Plain objects are welcome: they become the method's request message here.
        const input = ControlService.methods.find((m) => m.name === method)!.input as DescMessage;
        client[method]!(create(input, request as never), metadata((request as { session?: unknown }).session), { deadline: Date.now() + (options?.timeoutMs ?? 10_000) }, (err, res) =>
          err ? reject(new ModelCallError(err.code, err.details)) : resolve(res as never),
        );
      });
    },
    exportEpisode(session, options) {
      const exportEpisode = (client as unknown as Record<string, StreamingMethod>)["ExportEpisode"]!;
      const stream = exportEpisode.call(client, create(ExportEpisodeRequestSchema, { session }), metadata(session), { deadline: Date.now() + (options?.timeoutMs ?? 60_000) });
      return reassemble(stream);
    },
    async listSessions(options) {
      return (await control.call<ListSessionsResponse>("ListSessions", {}, options)).sessions;
    },
    ready(timeoutMs) {
      return new Promise((resolve, reject) => client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())));
    },
    close: () => client.close(),
  };
  return control;
}
