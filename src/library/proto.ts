// The generated protobuf-es messages, enums and service descriptors of modelstub.v1, as the
// package exports them: GenerateRequestSchema for create(), Role and FinishReason, EpisodeSchema
// for fromBinary() of episode bytes, ModelService and ControlService for other clients.
export * from "../../gen/modelstub/v1/model_pb.js";
export * from "../../gen/modelstub/v1/episode_pb.js";
export * from "../../gen/modelstub/v1/control_pb.js";
