/** Bad scripts that fit the schema but cannot work (templates, regexes, breaks, chunks, tool call arguments, trailers): [fixture, ...the lines the user sees, each after "FILE:"]. */
export const meaningMistakes: [string, ...string[]][] = [
  [
    "arguments-not-json.yaml",
    "5:22: entries[0].reply.tool_calls[0].arguments: arguments text is not valid JSON: expected a key in double quotes, got `c` at character 2 (hint: write the arguments as a mapping, and modelstub writes the JSON for you)",
  ],
  [
    "arguments-template-outside-string.yaml",
    '5:22: entries[0].reply.tool_calls[0].arguments: {{turn}} is outside a JSON string in the arguments text (hint: put it inside double quotes, "{{turn}}" (its value goes in JSON-escaped), or write the arguments as a mapping)',
  ],
  [
    "break-after-too-many-chunks.yaml",
    "3:14: entries[0].break: after_chunks is 5, but the reply streams only 3 chunks, so the break never happens (hint: use after_chunks from 0 to 3)",
  ],
  [
    "break-then-typo.yaml",
    '3:37: entries[0].break.then: expected one of "error", "hang", "drop", got the text "disconnect" (hint: error: end with a status; hang: wait for the caller\'s deadline; drop: reset the stream)',
  ],
  [
    "break-without-reply.yaml",
    "3:5: entries[0]: break needs a reply to break, but the entry's action is error (hint: give the entry a reply to stream, or remove break (an error ends the call at once))",
  ],
  [
    "capture-group-out-of-range.yaml",
    "3:38: entries[0].reply: template uses {{match.2}} but the regex has 1 capture group (hint: use {{match.0}} (the whole match) or {{match.1}}, or add a ( ) group to the regex)",
  ],
  [
    "capture-without-regex.yaml",
    "3:21: entries[0].reply: template uses {{match.1}} but the entry has no match.regex (hint: add match: {regex: ...} with a ( ) group; {{match.*}} reads its captures)",
  ],
  [
    "chunks-do-not-join.yaml",
    '4:15: entries[0].reply.chunks: the chunks join to "Hello, world", but the text is "Hello, world." (hint: the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined))',
  ],
  [
    "error-message-lone-surrogate.yaml",
    "2:39: entries[0].error.message: the message holds half of a UTF-16 surrogate pair, which no status can carry (hint: write the character whole (in YAML, \\U0001F600 for an emoji), or remove the escape)",
  ],
  [
    "invalid-regex.yaml",
    "2:21: entries[0].match.regex: invalid regex: /read (\\S+/: missing closing ) (hint: match.regex is a JavaScript regex: escape a literal ( ) [ ] { } . * + ? with a backslash)",
  ],
  [
    "named-group-typo.yaml",
    "6:30: entries[0].reply.tool_calls[0].arguments.path: template uses {{match.fiel}} but the regex has no group named fiel (hint: did you mean {{match.file}}?)",
  ],
  [
    "regex-backreference.yaml",
    "2:21: entries[0].match.regex: invalid regex: \\1 is a backreference, which matching cannot run in linear time (hint: match.regex runs on a linear-time engine (RE2), so no message can stall the server, and it has no backreferences: write the group's pattern again instead of \\1, like (\\w+) (\\w+))",
  ],
  [
    "regex-lookahead.yaml",
    "2:21: entries[0].match.regex: invalid regex: (?= starts a lookahead, which matching cannot run in linear time (hint: match.regex runs on a linear-time engine (RE2), so no message can stall the server, and it has no lookarounds: match the text itself and capture the part you need, or put a fixed text in match.contains)",
  ],
  [
    "regex-too-large.yaml",
    "2:21: entries[0].match.regex: the regex is too large: it compiles to 603 steps, and the most is 500 (matching costs up to that many steps per character) (hint: counts like {1,500} or .{0,300} repeat their part that many times: write + or * instead, or match a shorter part)",
  ],
  [
    "template-split-across-chunks.yaml",
    "4:23: entries[0].reply.chunks: the template variable {{last_user}} is split across two chunks (hint: keep each {{variable}} inside one chunk)",
  ],
  [
    "trailer-bin-not-base64.yaml",
    "5:22: entries[0].error.trailers.x-trace-bin: the value of `x-trace-bin` is not base64: a name ending in -bin carries bytes, written in base64 (hint: write the bytes in base64 (like AAEC, padding optional), or drop -bin from the name for a text value)",
  ],
  [
    "trailer-grpc-status.yaml",
    "5:9: entries[0].error.trailers: trailer `grpc-status` is reserved: gRPC writes the grpc-* trailers itself, and a scripted one would replace them (hint: set the status with code: and message: of this error)",
  ],
  [
    "trailer-transfer-encoding.yaml",
    "5:9: entries[0].error.trailers: trailer `transfer-encoding` is not allowed: HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2) (hint: remove it, or give your trailer another name, like x-transfer-encoding)",
  ],
  [
    "trailer-value-line-break.yaml",
    "5:19: entries[0].error.trailers.x-reason: the value of `x-reason` holds a line break (\\n) at character 11: trailer values are printable ASCII (hint: use characters from space to ~ only; for bytes or other text, name the trailer with -bin and write the value in base64)",
  ],
  [
    "trailer-value-non-ascii.yaml",
    '5:19: entries[0].error.trailers.x-reason: the value of `x-reason` holds the non-ASCII character "é" (U+00E9) at character 9: trailer values are printable ASCII (hint: use characters from space to ~ only; for bytes or other text, name the trailer with -bin and write the value in base64)',
  ],
  [
    "trailer-value-number.yaml",
    '5:25: entries[0].error.trailers.retry-after-ms: expected a text, got the number 100 (hint: quote it to make it a text: "100")',
  ],
  [
    "trailer-value-space-at-end.yaml",
    "5:25: entries[0].error.trailers.retry-after-ms: the value of `retry-after-ms` ends with a space, which HTTP/2 does not allow (RFC 9113, 8.2.1) (hint: remove the space at its ends)",
  ],
  [
    "trailer-with-capitals.yaml",
    "5:9: entries[0].error.trailers: key `Retry-After-Ms` is not allowed: trailer names are lowercase and start with a letter, like retry-after-ms (hint: write `retry-after-ms`)",
  ],
  ["unclosed-template.yaml", "2:24: entries[0].reply: template has a {{ without a closing }} (hint: close the variable: {{last_user}})"],
  ["unknown-template-variable.yaml", "2:23: entries[0].reply: unknown template variable {{last_usr}} (hint: did you mean {{last_user}}?)"],
  [
    "embedding-all-zeros.yaml",
    "3:13: embeddings[0].vector: the vector is all zeros: it has no direction, and cannot be made a unit vector (hint: give at least one component that is not 0, like [1, 0, 0])",
  ],
  [
    "embedding-input-twice.yaml",
    '4:12: embeddings[1].input: the input "cat" has a vector already: embeddings[0] answers it, so embeddings[1] never would (hint: remove one of embeddings[0] and embeddings[1])',
  ],
];
