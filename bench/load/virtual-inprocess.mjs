#!/usr/bin/env node
// Virtual time without the network: loads a script with the compiled engine (dist/), serves it
// under a virtual clock through the in-process port, and makes N sequential Generate calls.
// Prints one JSON line: { loadMs, wallMs, ok, errors }. Isolates the clock from gRPC's cost.
//
//   node virtual-inprocess.mjs --script FILE --count N
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { REPO_DIR } from "../lib/paths.mjs";

const { values: o } = parseArgs({ options: { script: { type: "string" }, count: { type: "string" } } });
const dist = (p) => import(pathToFileURL(path.join(REPO_DIR, "dist", p)).href);
const [{ loadScriptFile }, { createStub }, { createVirtualClock }, { createInProcessPort }, pb, { create }] = await Promise.all([
  dist("src/script/load-script.js"),
  dist("src/engine/create-stub.js"),
  dist("src/engine/clock.js"),
  dist("src/port/in-process-port.js"),
  dist("gen/modelstub/v1/model_pb.js"),
  import("@bufbuild/protobuf"),
]);
const t0 = performance.now();
const script = await loadScriptFile(o.script);
const clock = createVirtualClock();
const port = createInProcessPort(createStub({ script, clock }));
const loadMs = performance.now() - t0;
const request = create(pb.GenerateRequestSchema, { messages: [{ role: pb.Role.USER, content: "Say hello" }] });
const n = Number(o.count);
let ok = 0;
const errors = {};
const t1 = performance.now();
for (let i = 0; i < n; i++) {
  try {
    await port.generate(request);
    ok++;
  } catch (e) {
    errors[e.code ?? e.message] = (errors[e.code ?? e.message] ?? 0) + 1;
  }
}
const wallMs = performance.now() - t1;
port.close();
process.stdout.write(`${JSON.stringify({ loadMs, wallMs, ok, errors, virtualMs: clock.now() })}\n`);
