// echoRows: the rows of the echo section (issue 27): the server CPU of an echo streamed, against
// the same echo unary, on each front. Table only: it has no floor, so no chart bar. The target
// (<= 2x) is judged on the largest echo (960 KB); a typical one (10 KB, a frame per word) is
// reported beside it, so that the common case does not regress unseen.
import { TARGETS } from "./bench-config.mjs";
import { results } from "./bench-setup.mjs";

const names = { grpc: "gRPC GenerateStream", chat: "chat completions SSE", responses: "Responses SSE", messages: "Messages SSE" };

export function echoRows({ row, judge, f, x }) {
  const e = results.echo;
  if (!e?.sizes) return;
  const largest = Math.max(...e.sizes.map((s) => s.echoBytes));
  for (const size of e.sizes) {
    const kb = Math.round(size.echoBytes / 1000);
    const judged = size.echoBytes === largest;
    for (const [front, r] of Object.entries(size.fronts)) {
      const pass = judged ? judge(`echo streamed CPU, ${front} (x unary)`, r.ratio, (v) => v <= TARGETS.echoStreamCpu) : undefined;
      row(
        `Echo ${kb} KB streamed, ${names[front]}, server CPU ms a call (median of ${e.calls} batches of ${size.batch})`,
        f(r.streamCpuMs, 2),
        `${f(r.unaryCpuMs, 2)} (same echo unary)`,
        x(r.ratio),
        judged ? `<= ${TARGETS.echoStreamCpu}x` : "",
        pass,
      );
    }
  }
}
