// The README's TypeScript example: one Generate call with grpc-js and protobuf-es messages.
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { GenerateRequestSchema, GenerateResponseSchema, Role, type GenerateRequest, type GenerateResponse } from "../../../gen/modelstub/v1/model_pb.js";

const client = new Client(process.argv[2]!, credentials.createInsecure());
const metadata = new Metadata();
metadata.set("x-modelstub-session", "readme-ts");
const request = create(GenerateRequestSchema, {
  model: "readme-model",
  messages: [{ role: Role.USER, content: "Hello" }],
});
// protobuf-es generates messages, not stubs: grpc-js calls the method by path with its codecs.
client.makeUnaryRequest(
  "/modelstub.v1.ModelService/Generate",
  (m: GenerateRequest) => Buffer.from(toBinary(GenerateRequestSchema, m)),
  (b: Buffer) => fromBinary(GenerateResponseSchema, b),
  request,
  metadata,
  { deadline: Date.now() + 5000 },
  (err: ServiceError | null, resp?: GenerateResponse) => {
    client.close();
    if (err) throw err;
    console.log(resp?.message?.content);
  },
);
