import { toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { Server } from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
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

/**
 * Server reflection, both grpc.reflection.v1 and v1alpha (grpcurl 1.8 speaks only v1alpha),
 * fed the real FileDescriptorProtos of the generated code: real file names, dependency lists and
 * fully qualified type names, which proto-loader's output does not keep.
 */
export function addReflection(server: Server): void {
  const files = withDependencies([file_modelstub_v1_control, file_grpc_health_v1_health]);
  const fileDescriptorProtos = files.map((f) => Buffer.from(toBinary(FileDescriptorProtoSchema, f.proto)));
  new ReflectionService({ modelstub: { fileDescriptorProtos } } as never).addToServer(server);
}
