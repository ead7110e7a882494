// echoRows: the rows of the echo section (issue 27): the server CPU of a large echo streamed,
// against the same echo unary, on each front. Table only: it has no floor, so no chart bar.
import { TARGETS } from "./bench-config.mjs";
import { results } from "./bench-setup.mjs";

const names = { grpc: "gRPC GenerateStream", chat: "chat completions SSE", responses: "Responses SSE", messages: "Messages SSE" };

export function echoRows({ row, judge, f, x }) {
  const e = results.echo;
  if (!e?.fronts) return;
  const kb = Math.round(e.echoBytes / 1000);
  for (const [front, r] of Object.entries(e.fronts)) {
    const pass = judge(`echo streamed CPU, ${front} (x unary)`, r.ratio, (v) => v <= TARGETS.echoStreamCpu);
    row(`Echo ${kb} KB streamed, ${names[front]}, server CPU ms (median of ${e.calls})`, f(r.streamCpuMs, 2), `${f(r.unaryCpuMs, 2)} (same echo unary)`, x(r.ratio), `<= ${TARGETS.echoStreamCpu}x`, pass);
  }
}
