// Calls a modelstub server once with Generate and once with GenerateStream, and prints the
// replies. The server's address: $MODELSTUB_GRPC, or 127.0.0.1:50051 (where `modelstub serve`
// listens by default). protobuf-es generates messages, not stubs: grpc-js calls each method by
// its path, with the messages' binary codecs.
import { Client, credentials, Metadata } from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  FinishReason,
  FinishReasonSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GenerateStreamRequestSchema,
  GenerateStreamResponseSchema,
  Role,
  type GenerateResponse,
  type GenerateStreamResponse,
} from "./gen/modelstub/v1/model_pb.js";

const client = new Client(process.env.MODELSTUB_GRPC || "127.0.0.1:50051", credentials.createInsecure());
// Both calls land in one session of the server, which records them as one episode.
const metadata = new Metadata();
metadata.set("x-modelstub-session", "clients-typescript");

const encode = <T extends DescMessage>(schema: T) => (message: MessageShape<T>) => Buffer.from(toBinary(schema, message));
const decode = <T extends DescMessage>(schema: T) => (bytes: Buffer) => fromBinary(schema, bytes);
const user = (content: string) => [{ role: Role.USER, content }];

async function main(): Promise<void> {
  const reply = await new Promise<GenerateResponse>((resolve, reject) =>
    client.makeUnaryRequest(
      "/modelstub.v1.ModelService/Generate",
      encode(GenerateRequestSchema),
      decode(GenerateResponseSchema),
      create(GenerateRequestSchema, { model: "modelstub-default", messages: user("PROBE-ECHO Hello from TypeScript") }),
      metadata,
      { deadline: Date.now() + 10_000 },
      (err, response) => (err ? reject(err) : resolve(response!)),
    ),
  );
  console.log(`Generate: ${reply.message?.content}`);

  const frames = client.makeServerStreamRequest(
    "/modelstub.v1.ModelService/GenerateStream",
    encode(GenerateStreamRequestSchema),
    decode(GenerateStreamResponseSchema),
    create(GenerateStreamRequestSchema, { model: "modelstub-default", messages: user("PROBE-ECHO Streaming to TypeScript") }),
    metadata,
    { deadline: Date.now() + 10_000 },
  );
  let text = "";
  let deltas = 0;
  let finish = FinishReason.UNSPECIFIED;
  for await (const frame of frames as AsyncIterable<GenerateStreamResponse>) {
    if (frame.frame.case === "textDelta") {
      text += frame.frame.value;
      deltas++;
    } else if (frame.frame.case === "final") {
      finish = frame.frame.value.finishReason;
    }
  }
  console.log(`GenerateStream: ${text} (${deltas} deltas, ${FinishReasonSchema.value[finish]?.name})`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => client.close());
