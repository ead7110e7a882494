"""Calls a modelstub server once with Generate and once with GenerateStream, and prints the
replies. The server's address: $MODELSTUB_GRPC, or 127.0.0.1:50051 (where `modelstub serve`
listens by default). The stubs come from `python -m grpc_tools.protoc` (see docs/clients.md)."""
import os

import grpc

from modelstub.v1 import model_pb2, model_pb2_grpc

ADDR = os.environ.get("MODELSTUB_GRPC", "127.0.0.1:50051")
# Both calls land in one session of the server, which records them as one episode.
METADATA = [("x-modelstub-session", "clients-python")]


def user(content):
    return [model_pb2.Message(role=model_pb2.ROLE_USER, content=content)]


def main():
    with grpc.insecure_channel(ADDR) as channel:
        model = model_pb2_grpc.ModelServiceStub(channel)

        reply = model.Generate(
            model_pb2.GenerateRequest(model="modelstub-default", messages=user("PROBE-ECHO Hello from Python")),
            metadata=METADATA,
            timeout=10,
        )
        print(f"Generate: {reply.message.content}")

        text, deltas, finish = "", 0, model_pb2.FINISH_REASON_UNSPECIFIED
        frames = model.GenerateStream(
            model_pb2.GenerateStreamRequest(model="modelstub-default", messages=user("PROBE-ECHO Streaming to Python")),
            metadata=METADATA,
            timeout=10,
        )
        for frame in frames:
            kind = frame.WhichOneof("frame")
            if kind == "text_delta":
                text += frame.text_delta
                deltas += 1
            elif kind == "final":
                finish = frame.final.finish_reason
        print(f"GenerateStream: {text} ({deltas} deltas, {model_pb2.FinishReason.Name(finish)})")


if __name__ == "__main__":
    main()
