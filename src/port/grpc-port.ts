import {
  credentials as grpcCredentials,
  makeGenericClientConstructor,
  Metadata,
  type CallOptions,
  type ChannelCredentials,
  type Client,
  type ClientReadableStream,
  status as Status,
  type ServiceError,
} from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  GenerateStreamRequestSchema,
  ListModelsRequestSchema,
  ModelService,
  type ListModelsRequest,
  type ListModelsResponse,
  type Model,
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamRequest,
  type GenerateStreamResponse,
} from "../../gen/modelstub/v1/model_pb.js";
import { serviceDefinition } from "../grpc/service-definition.js";
import { ModelCallError, type ModelPort, type PortCallOptions } from "./model-port.js";
import { episodeHeader, instanceHeader, sessionHeader, stepHeader } from "../shared/header-names.js";
import { deadlineStatus } from "../engine/execution.js";

type ModelClient = Client & {
  Generate(req: GenerateRequest, md: Metadata, opts: CallOptions, cb: (err: ServiceError | null, res?: GenerateResponse) => void): { cancel(): void };
  GenerateStream(req: GenerateStreamRequest, md: Metadata, opts: CallOptions): ClientReadableStream<GenerateStreamResponse>;
  ListModels(req: ListModelsRequest, md: Metadata, opts: CallOptions, cb: (err: ServiceError | null, res?: ListModelsResponse) => void): { cancel(): void };
};

const ModelClientCtor = makeGenericClientConstructor(serviceDefinition(ModelService), "ModelService");

function metadataOf(options: PortCallOptions | undefined): Metadata {
  const md = new Metadata();
  if (options?.session) md.set(sessionHeader, options.session);
  if (options?.step) md.set(stepHeader, options.step);
  return md;
}

function callOptionsOf(options: PortCallOptions | undefined): CallOptions {
  return options?.timeoutMs !== undefined ? { deadline: Date.now() + options.timeoutMs } : {};
}

/**
 * Headers every answer carries: a call that failed before any message brings them in its one
 * header block, beside the status, but they name the answering process, not the status.
 */
const answerHeaders = new Set([instanceHeader, episodeHeader]);

function toError(err: ServiceError): ModelCallError {
  const trailers: [string, string][] = [];
  for (const [k, values] of Object.entries(err.metadata?.getMap() ?? {})) {
    if (answerHeaders.has(k)) continue;
    // A `-bin` trailer arrives as bytes: back to the base64 the script gave it in.
    if (typeof values === "string") trailers.push([k, values]);
    else if (k.endsWith("-bin")) trailers.push([k, values.toString("base64")]);
  }
  // grpc-js's own deadline ("Deadline exceeded after 0.101s,LB pick: ...,remote_addr=...") reads
  // as the server's: the same details as the in-process port, whichever side saw it first.
  const details = err.code === Status.DEADLINE_EXCEEDED && err.details.startsWith("Deadline exceeded") ? deadlineStatus.message : err.details;
  return new ModelCallError(err.code, details, trailers);
}

/** A model port over gRPC: an executor's view of a running modelstub server. */
export function openGrpcPort(address: string, channelCredentials: ChannelCredentials = grpcCredentials.createInsecure()): ModelPort {
  const client = new ModelClientCtor(address, channelCredentials) as unknown as ModelClient;
  return {
    generate(request, options) {
      return new Promise<GenerateResponse>((resolve, reject) => {
        const call = client.Generate(create(GenerateRequestSchema, request), metadataOf(options), callOptionsOf(options), (err, res) => {
          options?.signal?.removeEventListener("abort", onAbort);
          if (err) reject(toError(err));
          else resolve(res!);
        });
        const onAbort = () => call.cancel();
        options?.signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    async *generateStream(request, options) {
      // GenerateStreamRequest mirrors GenerateRequest field for field; the port takes one type.
      const { model, messages, tools, sampling, stepId } = create(GenerateRequestSchema, request);
      const streamRequest = create(GenerateStreamRequestSchema, { model, messages, tools, sampling, stepId });
      const call = client.GenerateStream(streamRequest, metadataOf(options), callOptionsOf(options));
      const onAbort = () => call.cancel();
      options?.signal?.addEventListener("abort", onAbort, { once: true });
      let ended = false;
      try {
        for await (const frame of call) yield frame as GenerateStreamResponse;
        ended = true;
      } catch (err) {
        ended = true;
        throw "code" in (err as object) ? toError(err as ServiceError) : err;
      } finally {
        options?.signal?.removeEventListener("abort", onAbort);
        if (!ended) call.cancel();
      }
    },
    listModels(options) {
      return new Promise<Model[]>((resolve, reject) => {
        const call = client.ListModels(create(ListModelsRequestSchema), metadataOf(options), callOptionsOf(options), (err, res) => {
          options?.signal?.removeEventListener("abort", onAbort);
          if (err) reject(toError(err));
          else resolve(res!.models);
        });
        const onAbort = () => call.cancel();
        options?.signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    close() {
      client.close();
    },
  };
}
