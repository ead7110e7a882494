#!/usr/bin/env node
// The in-process port's own cost per call: loads a one-entry literal reply script with the
// compiled engine (dist/), serves it on the real clock through the in-process port, warms up,
// then times N sequential Generate calls. Prints one JSON line: { usPerCall, calls, warmup, ok }.
// No network, no process boundary: what an embedding test pays per call.
//
//   node inprocess-literal.mjs --script FILE [--calls 100000] [--warmup 20000]
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { REPO_DIR } from "../lib/paths.mjs";

const { values: o } = parseArgs({
  options: { script: { type: "string" }, calls: { type: "string", default: "100000" }, warmup: { type: "string", default: "20000" } },
});
const dist = (p) => import(pathToFileURL(path.join(REPO_DIR, "dist", p)).href);
const [{ loadScriptFile }, { createStub }, { createInProcessPort }, pb, { create }] = await Promise.all([
  dist("src/script/load-script.js"),
  dist("src/engine/create-stub.js"),
  dist("src/port/in-process-port.js"),
  dist("gen/modelstub/v1/model_pb.js"),
  import("@bufbuild/protobuf"),
]);
const calls = Number(o.calls);
const warmup = Number(o.warmup);
const script = await loadScriptFile(o.script);
// The real clock (createStub's default); the episode caps lifted so every call is served and
// recorded as in a long session.
const port = createInProcessPort(createStub({ script, maxEpisodeCalls: (calls + warmup) * 2, maxEpisodeBytes: Number.MAX_SAFE_INTEGER }));
const request = create(pb.GenerateRequestSchema, { messages: [{ role: pb.Role.USER, content: "Say hello" }] });
for (let i = 0; i < warmup; i++) await port.generate(request);
let ok = 0;
const t0 = process.hrtime.bigint();
for (let i = 0; i < calls; i++) {
  const r = await port.generate(request);
  if (r) ok++;
}
const ns = Number(process.hrtime.bigint() - t0);
port.close();
process.stdout.write(`${JSON.stringify({ usPerCall: ns / 1000 / calls, calls, warmup, ok })}\n`);
