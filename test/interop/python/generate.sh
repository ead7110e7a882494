python -m grpc_tools.protoc -I proto --python_out=gen --grpc_python_out=gen \
  proto/modelstub/v1/model.proto proto/modelstub/v1/episode.proto proto/modelstub/v1/control.proto
