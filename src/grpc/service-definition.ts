import { fromBinary, toBinary, type DescMessage, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/** Responses whose handler gave their encoding (encodedAs), by message. */
const encodings = new WeakMap<object, () => Uint8Array>();

/**
 * Has `message` sent as `encode()` gives it instead of through toBinary: for a response whose
 * bytes the handler can write far more cheaply than reflection can (GetEpisode's, which carries
 * a whole episode). `encode` must give exactly what toBinary of the full message would; the
 * object itself may then leave out what only the bytes carry. Returns `message`.
 */
export function encodedAs<T extends object>(message: T, encode: () => Uint8Array): T {
  encodings.set(message, encode);
  return message;
}

function serializer(schema: DescMessage) {
  // grpc-js calls Buffer methods on what a serializer returns: a plain Uint8Array is not enough.
  return (message: never) => {
    const bytes = encodings.get(message)?.() ?? toBinary(schema, message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

/**
 * Looks at a request's bytes before they are decoded: undefined to decode them, or what the
 * handler gets instead (a refusal it recognises). grpc-js answers a throwing deserializer with
 * INTERNAL, so a check that wants another status hands the handler a marker rather than throwing.
 */
export type RequestCheck = (bytes: Buffer) => unknown;

/** Decodes a request's bytes exactly as fromBinary would (wire/decode-generate-request.ts). */
export type RequestDecoder = (bytes: Buffer) => unknown;

function deserializer(schema: DescMessage, check?: RequestCheck, decode: RequestDecoder = (bytes) => fromBinary(schema, bytes)) {
  if (!check) return decode;
  // The check first: a request past a limit is never decoded.
  return (bytes: Buffer) => check(bytes) ?? decode(bytes);
}

/**
 * A grpc-js service definition built from a protobuf-es service descriptor: the one adapter
 * that lets grpc-js serve (and call) protobuf-es messages, with no proto-loader and no second
 * code generator. Methods are keyed by their proto names (`Generate`, `GenerateStream`).
 */
export function serviceDefinition(
  service: DescService,
  /** Hand-written response serializers by method name, for hot paths (wire/encode-stream-frame.ts). */
  responseSerializers: Record<string, (message: never) => Buffer> = {},
  /** Checks of request bytes before decoding, by method name (limit-request.ts). */
  requestChecks: Record<string, RequestCheck> = {},
  /** Hand-written request decoders by method name, for hot paths; fromBinary for the rest. */
  requestDecoders: Record<string, RequestDecoder> = {},
): ServiceDefinition {
  const def: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methods) {
    def[m.name] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: serializer(m.input),
      requestDeserialize: deserializer(m.input, requestChecks[m.name], requestDecoders[m.name]),
      responseSerialize: responseSerializers[m.name] ?? serializer(m.output),
      responseDeserialize: deserializer(m.output),
      originalName: m.name,
    } as MethodDefinition<unknown, unknown>;
  }
  return def;
}
