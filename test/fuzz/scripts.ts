/**
 * A script that exercises most of the format at once: steps, matchers (regex with groups,
 * contains, ignore_case, tool_result, turn, model), templates, tool calls, chunking, latency and
 * every failure kind. Served with the virtual clock, so its latencies cost nothing.
 */
export const variedScript = `
name: fuzz-varied
models:
  - { id: fuzz-model, name: Fuzz, owned_by: fuzz, context_length: 1000 }
defaults: { on_exhausted: cycle, chunking: words, latency: { first_byte: 5ms, per_chunk: 1ms } }
entries:
  - match: { regex: "weather in (?<city>[A-Z][a-z]+) on (\\\\w+)" }
    reply:
      text: "Weather in {{match.city}} on {{match.2}} for {{session}} at turn {{turn}}."
      tool_calls:
        - { name: get_weather, arguments: { city: "{{match.city}}", day: "{{match.2}}", all: "{{match.0}}" } }
  - match: { contains: "fail", ignore_case: true }
    times: 3
    error: { code: UNAVAILABLE, message: "scripted failure for {{last_user}}", trailers: { retry-after-ms: "10" } }
  - match: { contains: "drop" }
    repeat: true
    reply: "one two three four"
    break: { after_chunks: 2, then: drop }
  - match: { contains: "break" }
    repeat: true
    reply: { text: "alpha beta gamma", chunking: { chars: 2 } }
    break: { after_chunks: 1, then: error, error: { code: ABORTED, message: "broken" } }
  - match: { contains: "hang" }
    repeat: true
    hang: true
  - match: { contains: "timeout" }
    repeat: true
    timeout: true
  - match: { tool_result: true }
    reply: "tool said: {{last_tool_result}}"
  - match: { turn: 0, model: fuzz-model }
    reply: { text: "first turn of {{model}}", usage: { input_tokens: 3 } }
  - match: { regex: "^(.*)$" }
    reply:
      text: "{{match.1}}"
      tool_calls:
        - { name: echo, arguments: '{"said": "{{last_user}}", "step": "{{step}}"}' }
  - repeat: true
    reply: "anything else: {{last_user}}"
steps:
  plan:
    - match: { regex: "(?i)plan (\\\\d+)" }
      reply: "plan {{match.1}}"
    - reply: { text: "a plan", finish_reason: length }
  act:
    on_exhausted: fail
    entries:
      - reply: { tool_calls: [{ name: bash, arguments: { command: "ls {{last_user}}" } }] }
      - reply: { chunks: ["a", "b", "c"], text: "abc" }
  agent/lint:
    - repeat: true
      match: { tool_result: read }
      reply: "read it"
    - repeat: true
      latency: 3s
      reply: "slow lint"
`;
