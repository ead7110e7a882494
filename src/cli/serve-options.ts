import type { OptionSpec } from "./options.js";

/** Every option of `modelstub serve`. --help, MODELSTUB_* variables and parsing all come from here. */
export const serveOptions: readonly OptionSpec[] = [
  { name: "script", env: "MODELSTUB_SCRIPT", type: "string", arg: "FILE", description: "Script to serve (YAML or JSON). Without it, the built-in default script." },
  { name: "grpc", env: "MODELSTUB_GRPC", type: "string", arg: "HOST:PORT", default: "127.0.0.1:50051", description: "Address of the gRPC server. Loopback by default: a stub is not a public service." },
  { name: "http", env: "MODELSTUB_HTTP", type: "string", arg: "HOST:PORT", description: "Also serve the OpenAI-compatible HTTP API (POST /v1/chat/completions, GET /v1/models) here, from the same sessions and episodes; conventionally 127.0.0.1:8080. Off unless given." },
  { name: "clock", env: "MODELSTUB_CLOCK", type: "string", values: ["real", "virtual"], default: "real", description: "real: declared latencies are waited out; virtual: they complete at once and are still recorded." },
  { name: "record-dir", env: "MODELSTUB_RECORD_DIR", type: "string", arg: "DIR", description: "Write each session's episode as <session>.episode.binpb (and .json) here, on reset and at shutdown." },
  { name: "max-sessions", env: "MODELSTUB_MAX_SESSIONS", type: "string", arg: "N", default: "1000", description: "Sessions kept at most; more answer RESOURCE_EXHAUSTED." },
  { name: "max-episode-calls", env: "MODELSTUB_MAX_EPISODE_CALLS", type: "string", arg: "N", default: "100000", description: "Calls one episode records at most; then RESOURCE_EXHAUSTED until the session is reset." },
  { name: "help", type: "boolean", description: "Print this help." },
];
