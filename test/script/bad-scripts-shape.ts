/** Bad scripts the schema refuses (unknown or misplaced keys, wrong types, numbers out of range, misspelt names): [fixture, ...the lines the user sees, each after "FILE:"]. */
export const shapeMistakes: [string, ...string[]][] = [
  [
    "bad-step-id.yaml",
    '2:3: steps: step id "plan step" has characters outside A-Z a-z 0-9 . _ : / - (hint: step ids travel in gRPC metadata: use plain ones like "plan-step")',
  ],
  ["chunking-on-the-entry.yaml", "3:5: entries[0]: unknown key `chunking` (hint: `chunking` goes under `reply:`)"],
  ["chunking-typo.yaml", "4:19: entries[0].reply.chunking: unknown key `char` (hint: did you mean `chars`?)"],
  [
    "context-length-over-uint32.yaml",
    "2:38: models[0].context_length: must be at most 4294967295, got the number 99999999999 (hint: ListModels sends it as modelstub.v1.Model.context_length, a uint32)",
  ],
  [
    "duplicate-model-id.yaml",
    '4:9: models[2].id: model "gpt-stub" is declared twice: expected unique ids (hint: models[0] declares it first; rename or remove one)',
  ],
  ["duration-negative.yaml", "2:14: entries[0].latency: must be at least 0, got the number -5 (hint: a duration cannot be negative; use 0 for no wait)"],
  [
    "duration-over-24-days.yaml",
    '2:14: entries[0].latency: the duration "40000m" (2400000000 ms) is longer than the longest wait, 24 days (2073600000 ms) (hint: timers cannot wait longer; for a call that never answers, use hang: true)',
  ],
  ["duration-with-words.yaml", '2:14: entries[0].latency: expected a duration like 250ms, 1.5s or 2m, got the text "30 sec" (hint: did you mean 30s?)'],
  ["empty-entries.yaml", "1:10: entries: the list has no entries: expected at least one (hint: add an entry like `- reply: ...`, or remove the list)"],
  ["entries-key-missing-under-list.yaml", "4:5: steps.plan: unknown key `entry` (hint: did you mean `entries`?)"],
  [
    "finish-reason-typo.yaml",
    '2:47: entries[0].reply.finish_reason: expected one of "stop", "length", "tool_calls", "content_filter", got the text "tool_call" (hint: did you mean "tool_calls"?)',
  ],
  ["ignore-case-text.yaml", '2:44: entries[0].match.ignore_case: expected true or false, got the text "yes" (hint: write true or false, without quotes)'],
  ["json-times-as-text.json", '3:35: entries[0].times: expected a whole number, got the text "2" (hint: remove the quotes: 2)'],
  ["json-unknown-key.json", "3:26: entries[0]: unknown key `lantecy` (hint: did you mean `latency`?)"],
  ["latency-under-reply.yaml", "4:7: entries[0].reply: unknown key `latency` (hint: `latency` belongs one level up, beside `reply:`, not inside it)"],
  [
    "no-action.yaml",
    "2:5: entries[0]: the entry has no action: expected one of reply, error, timeout or hang (hint: add `reply: ...`, `error: {code: ...}`, `timeout: true` or `hang: true`)",
  ],
  [
    "no-entries-nor-steps.yaml",
    "1:1: the script has neither entries nor steps: expected at least one of them (hint: add `entries:` with a list of replies, or `steps:` with a list per step id)",
  ],
  [
    "on-exhausted-in-entry.yaml",
    "3:5: entries[0]: unknown key `on_exhausted` (hint: on_exhausted is set per list, `entries: {on_exhausted: cycle, entries: [...]}`, or for all lists under `defaults:`)",
  ],
  [
    "on-exhausted-typo.yaml",
    '2:17: entries.on_exhausted: expected one of "fail", "repeat-last", "cycle", got the text "repeat_last" (hint: did you mean "repeat-last"?)',
  ],
  [
    "per-chunk-and-chunks-per-second.yaml",
    "2:52: entries[0].latency: per_chunk and chunks_per_second both set the wait between chunks: expected one of them (hint: keep per_chunk for a fixed wait (like 50ms), or chunks_per_second for a rate (like 20))",
  ],
  [
    "reply-empty.yaml",
    "3:11: entries[0].reply: expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking, got null (hint: the key has no value: write one after the colon, or remove the key)",
  ],
  [
    "reply-is-a-number.yaml",
    '2:12: entries[0].reply: expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking, got the number 42 (hint: quote it to make it a text: "42")',
  ],
  [
    "status-code-out-of-range.yaml",
    "2:20: entries[0].error.code: must be at most 16, got the number 17 (hint: gRPC status codes run from 1 to 16; a name like UNAVAILABLE reads better)",
  ],
  ["steps-as-list.yaml", "2:3: steps: expected a mapping, got a list (hint: remove the `- `: this is a mapping of keys, not a list)"],
  ["text-on-the-entry.yaml", "3:5: entries[0]: unknown key `text` (hint: `text` goes under `reply:`)"],
  ["timeout-yes.yaml", '2:14: entries[0].timeout: expected true, got the text "yes" (hint: write `timeout: true`, or remove the key)'],
  [
    "times-and-repeat.yaml",
    "3:5: entries[0]: times: 3 and repeat: true contradict each other (hint: keep times for a fixed number of uses, or repeat: true for no limit)",
  ],
  ["times-not-a-number.yaml", '3:12: entries[0].times: expected a whole number, got the text "twice" (hint: write a number, like 2)'],
  [
    "times-over-uint32.yaml",
    "2:12: entries[0].times: must be at most 4294967295, got the number 5000000000 (hint: VerifySession reports the uses left as a uint32; for an entry that never runs out, write repeat: true)",
  ],
  ["tool-call-without-name.yaml", "4:11: entries[0].reply.tool_calls[0].name: is required: expected a text (hint: add `name:` to this mapping)"],
  ["tool-calls-not-a-list.yaml", "4:9: entries[0].reply.tool_calls: expected a list, got a mapping (hint: start each item of a list with `- `)"],
  [
    "tool-result-number.yaml",
    '3:29: steps.summarize[0].match.tool_result: expected true or false, or a text, got the number 1 (hint: quote it to make it a text: "1")',
  ],
  [
    "turn-negative.yaml",
    "2:20: entries[0].match.turn: must be at least 0, got the number -1 (hint: the number of assistant messages before this call: 0 on the first call)",
  ],
  [
    "two-actions.yaml",
    "3:5: entries[0]: the entry has 2 actions (reply, error): expected exactly one (hint: an entry answers one way: split it into one entry per action, or remove all but one)",
  ],
  ["unknown-key-default.yaml", "1:1: unknown top-level key `default` (hint: did you mean `defaults`?)"],
  ["unknown-key-in-latency.yaml", "2:16: entries[0].latency: unknown key `first_bytes` (hint: did you mean `first_byte`?)"],
  ["unknown-key-in-match.yaml", "3:7: entries[0].match: unknown key `contain` (hint: did you mean `contains`?)"],
  ["unknown-key-in-step-entry.yaml", "5:7: steps.act[0]: unknown key `mtach` (hint: did you mean `match`?)"],
  ["unknown-key-in-tool-call.yaml", "5:11: entries[0].reply.tool_calls[0]: unknown key `args` (hint: did you mean `arguments`?)"],
  ["unknown-key-latncy.yaml", "3:5: entries[0]: unknown key `latncy` (hint: did you mean `latency`?)"],
  ["unknown-key-repy.yaml", "3:5: entries[0]: unknown key `repy` (hint: did you mean `reply`?)"],
  ["unknown-key-tool-call.yaml", "4:7: entries[0].reply: unknown key `tool_call` (hint: did you mean `tool_calls`?)"],
  ["unknown-key-top-level.yaml", "2:1: unknown top-level key `entires` (hint: did you mean `entries`?)"],
  [
    "unknown-status-code.yaml",
    '3:13: entries[0].error.code: expected one of "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED", got the text "UNAVAILBLE" (hint: did you mean "UNAVAILABLE"?)',
  ],
  [
    "usage-over-uint32.yaml",
    "4:30: entries[0].reply.usage.input_tokens: must be at most 2147483647, got the number 5000000000 (hint: input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range)",
  ],
  ["version-two.yaml", "1:10: version: expected 1, got the number 2 (hint: 1 is the only version of the format so far)"],
  ["embedding-vector-text.yaml", '3:17: embeddings[0].vector[1]: expected a number, got the text "0.5" (hint: remove the quotes: 0.5)'],
];
