/** One script with a step for each kind of scripted failure, and the waits around them. */
export const script = `
steps:
  slow:
    - latency: 1440m
      reply: "worth the wait"
  slow-stream:
    - latency: { first_byte: 600m, per_chunk: 300m }
      reply: "one two three four"
  error:
    - error:
        code: RESOURCE_EXHAUSTED
        message: "quota exceeded, slow down"
        trailers: { retry-after-ms: "1500", x-quota: "tokens" }
  timeout:
    - latency: 200ms
      timeout: true
  hang:
    - hang: true
  long:
    - latency: 60m
      reply: never
  break-error:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: error, error: { code: UNAVAILABLE, message: "link lost", trailers: { retry-after-ms: "30" } } }
  break-hang:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: hang }
  break-drop:
    - reply: "alpha beta gamma delta"
      break: { after_chunks: 2, then: drop }
  real-latency:
    - latency: { first_byte: 60ms, per_chunk: 20ms }
      reply: "a b c"
  well-inside:
    - latency: 4500ms
      repeat: true
      reply: "in time"
  inside-deadline:
    - latency: 4990ms
      repeat: true
      reply: "just in time"
  at-deadline:
    - latency: 5s
      repeat: true
      reply: "too late"
`;

export const ms = (since: number) => performance.now() - since;
export const code = (p: Promise<unknown>) =>
  p.then(
    () => Code.OK,
    (e: ModelCallError) => e.code,
  );
import { Code, type ModelCallError } from "../../src/index.js";
