import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { GenService } from "@bufbuild/protobuf/codegenv2";
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
import {
  ControlService,
  ExportEpisodeRequestSchema,
  WatchEventKind,
  WatchSessionRequestSchema,
  type ExportEpisodeResponse,
  type SessionInfo,
  type WatchSessionResponse,
} from "../../gen/modelstub/v1/control_pb.js";
import { Code } from "../shared/status-code.js";
import { sessionHeader } from "../shared/header-names.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { ModelCallError } from "./model-port.js";

const ControlClientCtor = makeGenericClientConstructor(serviceDefinition(ControlService), "ControlService");

/** An episode fetched through ExportEpisode: its deterministic bytes and how many calls they hold. */
export interface ExportedEpisode {
  bytes: Uint8Array;
  calls: number;
}

/** An open WatchSession stream (ControlClient.watchSession). */
export interface SessionWatch {
  /** Cancels the stream; `closed` then resolves. */
  close(): void;
  /** Resolves when the stream ends (close(), server shutdown); rejects with a ModelCallError on a status. */
  readonly closed: Promise<void>;
}

// The service's methods as the generated descriptor types them (keys in lowerCamelCase).
type ControlMethods = typeof ControlService extends GenService<infer M> ? M : never;
type UnaryKey = { [K in keyof ControlMethods]: ControlMethods[K]["methodKind"] extends "unary" ? K : never }[keyof ControlMethods];

/** A unary ControlService method, named as on the wire (`GetEpisode`). */
export type ControlMethod = Capitalize<UnaryKey>;
/** What `method` takes: its request message, or a plain object of its fields. */
export type ControlRequest<M extends ControlMethod> = MessageInitShape<ControlMethods[Uncapitalize<M> & UnaryKey]["input"]>;
/** What `method` answers: its response message. */
export type ControlResponse<M extends ControlMethod> = MessageShape<ControlMethods[Uncapitalize<M> & UnaryKey]["output"]>;

/** A promise-returning ControlService client: `call("GetEpisode", {session})`. */
export interface ControlClient {
  /**
   * A unary method: its request and response types come from the service's descriptor, so a
   * misspelt field or a wrong result type is a compile error, not a surprise at run time.
   */
  call<M extends ControlMethod>(method: M, request: ControlRequest<M>, options?: { timeoutMs?: number }): Promise<ControlResponse<M>>;
  /**
   * Fetches a session's episode bytes through the streamed ExportEpisode and reassembles them,
   * checking the total the server announced: works for an episode of any size with the default
   * 4 MiB receive limit. `timeoutMs` bounds the whole export (default 60 s: 64 MiB on a slow link).
   * Rejects with a ModelCallError: the call's status (NOT_FOUND for a session the server does not
   * keep, unless `allowMissing`), or DATA_LOSS when the chunks do not add up.
   */
  exportEpisode(session: string, options?: { timeoutMs?: number; allowMissing?: boolean }): Promise<ExportedEpisode>;
  /**
   * Watches a session's call events (WatchSession): resolves once the server has registered the
   * watch (its WATCHING message), so every call that starts afterwards reaches `onEvent`
   * (CALL_STARTED, then CALL_ENDED). Rejects with a ModelCallError when the watch is refused.
   */
  watchSession(session: string, onEvent: (event: WatchSessionResponse) => void): Promise<SessionWatch>;
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
type WatchMethod = (req: object, md: Metadata, o: object) => ClientReadableStream<WatchSessionResponse>;

/** Opens a watch on `stream`: resolves at its WATCHING message, then hands events on. */
function openWatch(stream: ClientReadableStream<WatchSessionResponse>, onEvent: (event: WatchSessionResponse) => void): Promise<SessionWatch> {
  return new Promise((resolve, reject) => {
    let settle!: { resolve: () => void; reject: (e: unknown) => void };
    const closed = new Promise<void>((res, rej) => (settle = { resolve: res, reject: rej }));
    // Whoever never awaits `closed` must not get an unhandled rejection.
    closed.catch(() => undefined);
    let watching = false;
    stream.on("data", (m: WatchSessionResponse) => {
      if (m.kind === WatchEventKind.WATCHING) {
        watching = true;
        return resolve({ close: () => stream.cancel(), closed });
      }
      onEvent(m);
    });
    stream.on("error", (err: ServiceError) => {
      // A cancel of our own is the normal end of a watch.
      if (err.code === Code.CANCELLED) return settle.resolve();
      const e = new ModelCallError(err.code, err.details);
      if (!watching) reject(e);
      settle.reject(e);
    });
    stream.on("end", () => {
      if (!watching) reject(new ModelCallError(Code.UNAVAILABLE, "WatchSession ended before the watch was registered"));
      settle.resolve();
    });
  });
}

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
export function createControlClient(
  address: string,
  /** `timeoutMs`: the deadline of a `call` that gives none of its own (default 10 s). */
  opts: { token?: string; credentials?: ChannelCredentials; channelOptions?: ChannelOptions; timeoutMs?: number } = {},
): ControlClient {
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
    if (typeof session === "string" && session !== "" && /^[\x20-\x7e]*$/.test(session)) md.set(sessionHeader, session);
    return md;
  };
  const control: ControlClient = {
    call(method, request, options) {
      return new Promise((resolve, reject) => {
        // Plain objects are welcome: they become the method's request message here.
        const input = ControlService.methods.find((m) => m.name === method)!.input as DescMessage;
        client[method]!(
          create(input, request as never),
          metadata("session" in request ? request.session : undefined),
          { deadline: Date.now() + (options?.timeoutMs ?? opts.timeoutMs ?? 10_000) },
          (err, res) => (err ? reject(new ModelCallError(err.code, err.details)) : resolve(res as never)),
        );
      });
    },
    exportEpisode(session, options) {
      const exportEpisode = (client as unknown as Record<string, StreamingMethod>)["ExportEpisode"]!;
      const stream = exportEpisode.call(
        client,
        create(ExportEpisodeRequestSchema, { session, allowMissing: options?.allowMissing ?? false }),
        metadata(session),
        { deadline: Date.now() + (options?.timeoutMs ?? 60_000) },
      );
      return reassemble(stream);
    },
    watchSession(session, onEvent) {
      const watch = (client as unknown as Record<string, WatchMethod>)["WatchSession"]!;
      return openWatch(watch.call(client, create(WatchSessionRequestSchema, { session }), metadata(session), {}), onEvent);
    },
    async listSessions(options) {
      return (await control.call("ListSessions", {}, options)).sessions;
    },
    ready(timeoutMs) {
      return new Promise((resolve, reject) => client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())));
    },
    close: () => client.close(),
  };
  return control;
}
