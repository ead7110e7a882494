import { toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { status, type MethodDefinition, type Server, type ServerDuplexStream, type ServiceDefinition } from "@grpc/grpc-js";
import { file_grpc_health_v1_health } from "../../gen/grpc/health/v1/health_pb.js";
import { file_modelstub_v1_control } from "../../gen/modelstub/v1/control_pb.js";

/** Every file and its transitive dependencies, each once, dependencies first. */
function withDependencies(files: DescFile[]): DescFile[] {
  const seen = new Set<string>();
  const out: DescFile[] = [];
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.add(f.name);
    f.dependencies.forEach(visit);
    out.push(f);
  };
  files.forEach(visit);
  return out;
}

type Stream = ServerDuplexStream<unknown, unknown>;
/** @grpc/reflection's own method (with its serializers) and handler, by path. */
type Reflection = Map<string, { method: MethodDefinition<unknown, unknown>; handler: (stream: Stream) => void }>;

let loading: Promise<Reflection> | undefined;

/**
 * @grpc/reflection, loaded on the first reflection call: it brings its own copy of grpc-js,
 * protobufjs and proto-loader, which cost more at start-up than the rest of modelstub together.
 */
function loadReflection(): Promise<Reflection> {
  return (loading ??= import("@grpc/reflection").then(({ ReflectionService }) => {
    const files = withDependencies([file_modelstub_v1_control, file_grpc_health_v1_health]);
    const fileDescriptorProtos = files.map((f) => Buffer.from(toBinary(FileDescriptorProtoSchema, f.proto)));
    const byPath: Reflection = new Map();
    // Its addToServer registers each version's service: keep what it registers, by path.
    const capture = {
      addService(definition: ServiceDefinition, implementation: Record<string, (stream: Stream) => void>) {
        for (const [name, method] of Object.entries(definition)) byPath.set(method.path, { method, handler: implementation[name]! });
      },
    };
    new ReflectionService({ modelstub: { fileDescriptorProtos } } as never).addToServer(capture as never);
    return byPath;
  }));
}

/** grpc-js's own words when a (de)serializer throws, with details only when it would send them. */
function codecFailure(what: string, err: unknown): { code: status; details: string } {
  const details = process.env["GRPC_NODE_DEBUG_SEND_ERROR_DETAILS"] === "true" ? `Error ${what}: ${(err as Error)?.message ?? err}` : `Error ${what}`;
  return { code: status.INTERNAL, details };
}

/**
 * The call as @grpc/reflection's handler sees it: messages decoded and encoded with its own
 * serializers, as grpc-js would have (the lazy definition passes the bytes through).
 */
function decodingStream(stream: Stream, method: MethodDefinition<unknown, unknown>): Stream {
  let failed = false;
  const fail = (what: string, err: unknown) => {
    failed = true;
    stream.emit("error", codecFailure(what, err));
  };
  const view = {
    on(event: string, listener: (...args: unknown[]) => void) {
      if (event !== "data") stream.on(event, (...args: unknown[]) => failed || listener(...args));
      else
        stream.on("data", (bytes: Buffer) => {
          if (failed) return;
          let message: unknown;
          try {
            message = method.requestDeserialize(bytes);
          } catch (err) {
            return fail("deserializing request", err);
          }
          listener(message);
        });
      return view;
    },
    write(message: unknown) {
      if (failed) return false;
      try {
        return stream.write(method.responseSerialize(message));
      } catch (err) {
        fail("serializing response", err);
        return false;
      }
    },
    end() {
      stream.end();
    },
  };
  return view as unknown as Stream;
}

const pass = (bytes: Buffer) => bytes;

/** A reflection version's service whose handler loads @grpc/reflection when first called. */
function lazyService(version: string): ServiceDefinition {
  const path = `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`;
  const method = {
    path,
    requestStream: true,
    responseStream: true,
    requestSerialize: pass,
    requestDeserialize: pass,
    responseSerialize: pass,
    responseDeserialize: pass,
    originalName: "serverReflectionInfo",
  };
  return { ServerReflectionInfo: method } as ServiceDefinition;
}

function lazyHandler(version: string) {
  const path = `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`;
  // Until the handler listens, grpc-js keeps the call's messages: none is lost while it loads.
  return (stream: Stream) => {
    loadReflection().then(
      (byPath) => {
        const { method, handler } = byPath.get(path)!;
        handler(decodingStream(stream, method));
      },
      (err) => stream.emit("error", { code: status.INTERNAL, details: `server reflection could not load: ${(err as Error)?.message ?? err}` }),
    );
  };
}

/**
 * Server reflection, both grpc.reflection.v1 and v1alpha (grpcurl 1.8 speaks only v1alpha),
 * fed the real FileDescriptorProtos of the generated code: real file names, dependency lists and
 * fully qualified type names, which proto-loader's output does not keep.
 */
export function addReflection(server: Server): void {
  for (const version of ["v1", "v1alpha"]) server.addService(lazyService(version), { ServerReflectionInfo: lazyHandler(version) });
}
