import sys

import grpc

sys.path.insert(0, "gen")
from modelstub.v1 import model_pb2, model_pb2_grpc  # noqa: E402

with grpc.insecure_channel(sys.argv[1]) as channel:
    model = model_pb2_grpc.ModelServiceStub(channel)
    resp = model.Generate(
        model_pb2.GenerateRequest(
            model="readme-model",
            messages=[model_pb2.Message(role=model_pb2.ROLE_USER, content="Hello")],
        ),
        metadata=[("x-modelstub-session", "readme-python")],
        timeout=5,
    )
    print(resp.message.content)
