import { fromBinary, toBinary, type DescMessage, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

function serializer(schema: DescMessage) {
  // grpc-js calls Buffer methods on what a serializer returns: a plain Uint8Array is not enough.
  return (message: never) => {
    const bytes = toBinary(schema, message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer(schema: DescMessage) {
  return (bytes: Buffer) => fromBinary(schema, bytes);
}

/**
 * A grpc-js service definition built from a protobuf-es service descriptor: the one adapter
 * that lets grpc-js serve (and call) protobuf-es messages, with no proto-loader and no second
 * code generator. Methods are keyed by their proto names (`Generate`, `GenerateStream`).
 */
export function serviceDefinition(
  service: DescService,
  /** Hand-written response serializers by method name, for hot paths (encode-stream-frame.ts). */
  responseSerializers: Record<string, (message: never) => Buffer> = {},
): ServiceDefinition {
  const def: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methods) {
    def[m.name] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: serializer(m.input),
      requestDeserialize: deserializer(m.input),
      responseSerialize: responseSerializers[m.name] ?? serializer(m.output),
      responseDeserialize: deserializer(m.output),
      originalName: m.name,
    } as MethodDefinition<unknown, unknown>;
  }
  return def;
}
