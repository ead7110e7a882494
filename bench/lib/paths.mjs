// Paths shared by the bench's processes.
import { fileURLToPath } from "node:url";
import path from "node:path";

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const REPO_DIR = path.dirname(BENCH_DIR);
export const CACHE_DIR = path.join(REPO_DIR, ".cache", "bench");
export const TOOLS_BIN = path.join(REPO_DIR, ".cache", "bin");
export const PROTO_DIR = path.join(REPO_DIR, "proto");
export const MODEL_PROTO = path.join(PROTO_DIR, "modelstub", "v1", "model.proto");
export const PROTOSET = path.join(CACHE_DIR, "modelstub.binpb");
export const DIST_MODEL_PB = path.join(REPO_DIR, "dist", "gen", "modelstub", "v1", "model_pb.js");
export const DIST_MAIN = path.join(REPO_DIR, "dist", "src", "cli", "main.js");
export const MODELSTUB_BIN = process.env.MODELSTUB_BIN || path.join(REPO_DIR, "bin", "modelstub.js");
export const PROBE = path.join(BENCH_DIR, "lib", "probe.mjs");
export const FLOOR_SERVER = path.join(BENCH_DIR, "servers", "floor-server.mjs");
export const LOADGEN = path.join(BENCH_DIR, "load", "loadgen.mjs");
export const PEER_DIR = path.join(BENCH_DIR, "peer");
export const EMPTY_LISTENER = path.join(BENCH_DIR, "servers", "empty-listener.mjs");
export const HTTP_FLOOR_SERVER = path.join(BENCH_DIR, "servers", "http-floor-server.mjs");
export const HTTP_LOADGEN = path.join(BENCH_DIR, "load", "http-loadgen.mjs");
// npm-installed peers (bench/install-tools.sh): .cache/peers/<name>/node_modules/...
export const PEERS_DIR = path.join(REPO_DIR, ".cache", "peers");

// The ratio chart docs/performance.md shows (--readme writes it, with the table).
export const RATIO_CHART = path.join(REPO_DIR, "docs", "performance-ratios.svg");

export const GENERATE_PATH = "/modelstub.v1.ModelService/Generate";
export const GENERATE_STREAM_PATH = "/modelstub.v1.ModelService/GenerateStream";
export const LIST_MODELS_PATH = "/modelstub.v1.ModelService/ListModels";
export const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";

export const CHAT_COMPLETIONS_PATH = "/v1/chat/completions";
export const HTTP_MODELS_PATH = "/v1/models";
export const HTTP_HEALTH_PATH = "/health";
