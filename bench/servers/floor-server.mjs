#!/usr/bin/env node
// The floor: a bare grpc-js server on modelstub's paths, with Buffer passthrough serializers,
// answering pre-encoded constant bytes. Nothing is decoded, matched, rendered or recorded, so
// it is as fast as grpc-js on this machine goes.
//
//   node floor-server.mjs --payloads FILE [--port 0] [--unary constant|hang|delay=MS]
//
// Prints "floor: listening on 127.0.0.1:PORT" once bound; SIGTERM/SIGINT stop it.
import { parseArgs } from "node:util";
import grpc from "@grpc/grpc-js";
import { readPayloadFile } from "../lib/payloads.mjs";
import { GENERATE_PATH, GENERATE_STREAM_PATH, HEALTH_CHECK_PATH, LIST_MODELS_PATH } from "../lib/paths.mjs";

const { values: opts } = parseArgs({
  options: { payloads: { type: "string" }, port: { type: "string", default: "0" }, unary: { type: "string", default: "constant" } },
});
const p = readPayloadFile(opts.payloads);
const pass = (b) => b;
const method = (path, responseStream) => ({
  path,
  requestStream: false,
  responseStream,
  requestSerialize: pass,
  requestDeserialize: pass,
  responseSerialize: pass,
  responseDeserialize: pass,
});

const response = p.response;
const frames = p.frames;
const serving = Buffer.from([0x08, 0x01]); // grpc.health.v1.HealthCheckResponse{status: SERVING}
const empty = Buffer.alloc(0);

let generate;
if (opts.unary === "constant") {
  generate = (_call, cb) => cb(null, response);
} else if (opts.unary === "hang") {
  // Never answers: grpc-js ends the call at the client's deadline. The only state kept is what
  // grpc-js itself keeps per call.
  generate = () => {};
} else if (opts.unary.startsWith("delay=")) {
  const ms = Number(opts.unary.slice(6));
  generate = (call, cb) => {
    const t = setTimeout(() => cb(null, response), ms);
    call.on("cancelled", () => clearTimeout(t));
  };
} else {
  throw new Error(`unknown --unary ${opts.unary}`);
}

function generateStream(call) {
  let i = 0;
  let done = false;
  call.on("cancelled", () => (done = true));
  const pump = () => {
    while (!done && i < frames.length) {
      if (!call.write(frames[i++])) {
        call.once("drain", pump);
        return;
      }
    }
    if (!done) call.end();
  };
  pump();
}

const server = new grpc.Server();
server.addService(
  {
    Generate: method(GENERATE_PATH, false),
    GenerateStream: method(GENERATE_STREAM_PATH, true),
    ListModels: method(LIST_MODELS_PATH, false),
  },
  { Generate: generate, GenerateStream: generateStream, ListModels: (_c, cb) => cb(null, empty) },
);
server.addService({ Check: method(HEALTH_CHECK_PATH, false) }, { Check: (_c, cb) => cb(null, serving) });
server.bindAsync(`127.0.0.1:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`floor: cannot bind: ${err.message}\n`);
    process.exit(2);
  }
  process.stdout.write(`floor: listening on 127.0.0.1:${port}\n`);
});
const stop = () => {
  server.forceShutdown();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
