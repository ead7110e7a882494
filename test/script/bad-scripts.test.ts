import { readdirSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { validate } from "../../src/cli/validate.js";
import { loadScriptFile } from "../../src/engine/load-script.js";
import { ScriptError } from "../../src/engine/script-error.js";

/*
 * The corpus of bad scripts: each fixture is one mistake a person makes, and each is pinned
 * to the exact lines `modelstub validate` prints (and `modelstub serve --script` shows after
 * "cannot load script "). A change to any message shows up here as a diff to review.
 */

// Paths in messages are as given: relative to the working directory, like a user's.
const dir = relative(process.cwd(), fileURLToPath(new URL("../fixtures/bad-scripts", import.meta.url))).split("\\").join("/");
const pathOf = (name: string) => `${dir}/${name}`;

/** [fixture, ...the lines the user sees, each after "FILE:"]. */
const corpus: [string, ...string[]][] = [
  [
    "apostrophe-in-single-quotes.yaml",
    "2:16: entries[0].reply: invalid YAML: text after the end of a single-quoted text (hint: inside single quotes write '' for one ', or use double quotes)",
  ],
  [
    "arguments-not-json.yaml",
    "5:22: entries[0].reply.tool_calls[0].arguments: arguments text is not valid JSON: expected a key in double quotes, got `c` at character 2 (hint: write the arguments as a mapping, and modelstub writes the JSON for you)",
  ],
  [
    "arguments-template-outside-string.yaml",
    "5:22: entries[0].reply.tool_calls[0].arguments: {{turn}} is outside a JSON string in the arguments text (hint: put it inside double quotes, \"{{turn}}\" (its value goes in JSON-escaped), or write the arguments as a mapping)",
  ],
  [
    "bad-indentation.yaml",
    "4:6: entries[0]: invalid YAML: this key is not indented like the keys beside it (hint: keys of one mapping start in the same column: line it up with the key above, or indent it further to nest it)",
  ],
  [
    "bad-step-id.yaml",
    "2:3: steps: step id \"plan step\" has characters outside A-Z a-z 0-9 . _ : / - (hint: step ids travel in gRPC metadata: use plain ones like \"plan-step\")",
  ],
  [
    "break-after-too-many-chunks.yaml",
    "3:14: entries[0].break: after_chunks is 5, but the reply streams only 3 chunks, so the break never happens (hint: use after_chunks from 0 to 3)",
  ],
  [
    "break-then-typo.yaml",
    "3:37: entries[0].break.then: expected one of \"error\", \"hang\", \"drop\", got the text \"disconnect\" (hint: error: end with a status; hang: wait for the caller's deadline; drop: reset the stream)",
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
    "chunking-on-the-entry.yaml",
    "3:5: entries[0]: unknown key `chunking` (hint: `chunking` goes under `reply:`)",
  ],
  [
    "chunking-typo.yaml",
    "4:19: entries[0].reply.chunking: unknown key `char` (hint: did you mean `chars`?)",
  ],
  [
    "chunks-do-not-join.yaml",
    "4:15: entries[0].reply.chunks: the chunks join to \"Hello, world\", but the text is \"Hello, world.\" (hint: the chunks must concatenate exactly to the text (or leave text out: it is then the chunks joined))",
  ],
  [
    "colon-in-plain-text.yaml",
    "2:12: entries[0].reply: invalid YAML: a `: ` inside an unquoted text starts a mapping (hint: quote the whole text: \"Note: the build is green.\")",
  ],
  [
    "context-length-over-uint32.yaml",
    "2:38: models[0].context_length: must be at most 4294967295, got the number 99999999999 (hint: ListModels sends it as modelstub.v1.Model.context_length, a uint32)",
  ],
  [
    "control-character.yaml",
    "2:18: the script holds the control character U+0007: a script is text, and YAML allows only tabs and line breaks among control characters (hint: remove it, or write it as an escape inside a double-quoted text (\"\\x07\"); a binary file is not a script)",
  ],
  [
    "duplicate-key.yaml",
    "4:5: entries[0]: invalid YAML: the key `times` is given twice in this mapping (hint: each key may appear once: remove one of them)",
  ],
  [
    "duplicate-model-id.yaml",
    "4:9: models[2].id: model \"gpt-stub\" is declared twice: expected unique ids (hint: models[0] declares it first; rename or remove one)",
  ],
  [
    "duration-negative.yaml",
    "2:14: entries[0].latency: must be at least 0, got the number -5 (hint: a duration cannot be negative; use 0 for no wait)",
  ],
  [
    "duration-over-24-days.yaml",
    "2:14: entries[0].latency: the duration \"40000m\" (2400000000 ms) is longer than the longest wait, 24 days (2073600000 ms) (hint: timers cannot wait longer; for a call that never answers, use hang: true)",
  ],
  [
    "duration-with-words.yaml",
    "2:14: entries[0].latency: expected a duration like 250ms, 1.5s or 2m, got the text \"30 sec\" (hint: did you mean 30s?)",
  ],
  [
    "empty-entries.yaml",
    "1:10: entries: the list has no entries: expected at least one (hint: add an entry like `- reply: ...`, or remove the list)",
  ],
  [
    "empty-file.yaml",
    "1:1: the script is empty (hint: a script is a mapping with `entries:` (a list of replies) or `steps:`)",
  ],
  [
    "entries-key-missing-under-list.yaml",
    "4:5: steps.plan: unknown key `entry` (hint: did you mean `entries`?)",
  ],
  [
    "error-message-lone-surrogate.yaml",
    "2:39: entries[0].error.message: the message holds half of a UTF-16 surrogate pair, which no status can carry (hint: write the character whole (in YAML, \\U0001F600 for an emoji), or remove the escape)",
  ],
  [
    "finish-reason-typo.yaml",
    "2:47: entries[0].reply.finish_reason: expected one of \"stop\", \"length\", \"tool_calls\", \"content_filter\", got the text \"tool_call\" (hint: did you mean \"tool_calls\"?)",
  ],
  [
    "ignore-case-text.yaml",
    "2:44: entries[0].match.ignore_case: expected true or false, got the text \"yes\" (hint: write true or false, without quotes)",
  ],
  [
    "invalid-regex.yaml",
    "2:21: entries[0].match.regex: invalid regex: /read (\\S+/: missing closing ) (hint: match.regex is a JavaScript regex: escape a literal ( ) [ ] { } . * + ? with a backslash)",
  ],
  [
    "json-comment-in-entry.json",
    "4:26: entries[0]: invalid JSON: a comment (hint: JSON has no comments: remove it, or write the script as YAML)",
  ],
  [
    "json-comment.json",
    "2:3: invalid JSON: a comment (hint: JSON has no comments: remove it, or write the script as YAML)",
  ],
  [
    "json-nested-too-deep.json",
    "1:370: entries[0].reply.tool_calls[0].arguments.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: lists and mappings nest deeper than 64 levels here (hint: a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text))",
  ],
  [
    "json-times-as-text.json",
    "3:35: entries[0].times: expected a whole number, got the text \"2\" (hint: remove the quotes: 2)",
  ],
  [
    "json-trailing-comma.json",
    "3:26: entries: invalid JSON: a comma before `]` (hint: JSON allows no comma after the last item: remove it)",
  ],
  [
    "json-unknown-key.json",
    "3:26: entries[0]: unknown key `lantecy` (hint: did you mean `latency`?)",
  ],
  [
    "latency-under-reply.yaml",
    "4:7: entries[0].reply: unknown key `latency` (hint: `latency` belongs one level up, beside `reply:`, not inside it)",
  ],
  [
    "list-mapping-without-entries.yaml",
    "4:5: steps.plan: invalid YAML: a list item where a key of the mapping above was expected (hint: a mapping cannot also be a list: put the items under a key such as `entries:`, indented below it)",
  ],
  [
    "missing-dash-in-list.yaml",
    "4:2: entries[1]: invalid YAML: a list item without its `- ` (hint: start the item with `- `, or indent it like the keys of the item above)",
  ],
  [
    "named-group-typo.yaml",
    "6:30: entries[0].reply.tool_calls[0].arguments.path: template uses {{match.fiel}} but the regex has no group named fiel (hint: did you mean {{match.file}}?)",
  ],
  [
    "nested-too-deep.yaml",
    "5:254: entries[0].reply.tool_calls[0].arguments.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: lists and mappings nest deeper than 64 levels here (hint: a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text))",
  ],
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
    "2:17: entries.on_exhausted: expected one of \"fail\", \"repeat-last\", \"cycle\", got the text \"repeat_last\" (hint: did you mean \"repeat-last\"?)",
  ],
  [
    "only-comments.yaml",
    "1:1: the script is empty (hint: a script is a mapping with `entries:` (a list of replies) or `steps:`)",
  ],
  [
    "per-chunk-and-chunks-per-second.yaml",
    "2:52: entries[0].latency: per_chunk and chunks_per_second both set the wait between chunks: expected one of them (hint: keep per_chunk for a fixed wait (like 50ms), or chunks_per_second for a rate (like 20))",
  ],
  [
    "regex-backreference.yaml",
    "2:21: entries[0].match.regex: invalid regex: \\1 is a backreference, which matching cannot run in linear time (hint: match.regex runs on a linear-time engine (RE2), so no message can stall the server, and it has no backreferences: write the group's pattern again instead of \\1, like (\\w+) (\\w+))",
  ],
  [
    "regex-backslash-in-double-quotes.yaml",
    "2:30: entries[0].match.regex: invalid YAML: invalid escape \\d in a double-quoted text (hint: in double quotes a backslash starts an escape: write a regex in single quotes ('\\d+'), or double each backslash)",
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
    "reply-empty.yaml",
    "3:11: entries[0].reply: expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking, got null (hint: the key has no value: write one after the colon, or remove the key)",
  ],
  [
    "reply-is-a-number.yaml",
    "2:12: entries[0].reply: expected a reply: a text, or a mapping with text, tool_calls, finish_reason, usage, chunks or chunking, got the number 42 (hint: quote it to make it a text: \"42\")",
  ],
  [
    "status-code-out-of-range.yaml",
    "2:20: entries[0].error.code: must be at most 16, got the number 17 (hint: gRPC status codes run from 1 to 16; a name like UNAVAILABLE reads better)",
  ],
  [
    "steps-as-list.yaml",
    "2:3: steps: expected a mapping, got a list (hint: remove the `- `: this is a mapping of keys, not a list)",
  ],
  [
    "tab-indentation.yaml",
    "2:1: entries: invalid YAML: a tab is used for indentation (hint: YAML indents with spaces only: replace the tab with spaces)",
  ],
  [
    "template-split-across-chunks.yaml",
    "4:23: entries[0].reply.chunks: the template variable {{last_user}} is split across two chunks (hint: keep each {{variable}} inside one chunk)",
  ],
  [
    "text-is-a-list.yaml",
    "3:13: entries[0].reply.text: expected a text, got a list (hint: a text that starts with [ is read as a list: quote the whole text)",
  ],
  [
    "text-on-the-entry.yaml",
    "3:5: entries[0]: unknown key `text` (hint: `text` goes under `reply:`)",
  ],
  [
    "timeout-yes.yaml",
    "2:14: entries[0].timeout: expected true, got the text \"yes\" (hint: write `timeout: true`, or remove the key)",
  ],
  [
    "times-and-repeat.yaml",
    "3:5: entries[0]: times: 3 and repeat: true contradict each other (hint: keep times for a fixed number of uses, or repeat: true for no limit)",
  ],
  [
    "times-not-a-number.yaml",
    "3:12: entries[0].times: expected a whole number, got the text \"twice\" (hint: write a number, like 2)",
  ],
  [
    "times-over-uint32.yaml",
    "2:12: entries[0].times: must be at most 4294967295, got the number 5000000000 (hint: VerifySession reports the uses left as a uint32; for an entry that never runs out, write repeat: true)",
  ],
  [
    "tool-call-without-name.yaml",
    "4:11: entries[0].reply.tool_calls[0].name: is required: expected a text (hint: add `name:` to this mapping)",
  ],
  [
    "tool-calls-not-a-list.yaml",
    "4:9: entries[0].reply.tool_calls: expected a list, got a mapping (hint: start each item of a list with `- `)",
  ],
  [
    "tool-result-number.yaml",
    "3:29: steps.summarize[0].match.tool_result: expected true or false, or a text, got the number 1 (hint: quote it to make it a text: \"1\")",
  ],
  [
    "top-level-list.yaml",
    "1:1: a script is a mapping with `entries:` or `steps:`, got a list (hint: put the list under `entries:`)",
  ],
  [
    "top-level-text.yaml",
    "1:1: a script is a mapping with `entries:` or `steps:`, got the text \"Hello, I am a script.\" (hint: start the file with `entries:` and a list of replies)",
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
    "5:19: entries[0].error.trailers.x-reason: the value of `x-reason` holds the non-ASCII character \"é\" (U+00E9) at character 9: trailer values are printable ASCII (hint: use characters from space to ~ only; for bytes or other text, name the trailer with -bin and write the value in base64)",
  ],
  [
    "trailer-value-number.yaml",
    "5:25: entries[0].error.trailers.retry-after-ms: expected a text, got the number 100 (hint: quote it to make it a text: \"100\")",
  ],
  [
    "trailer-value-space-at-end.yaml",
    "5:25: entries[0].error.trailers.retry-after-ms: the value of `retry-after-ms` ends with a space, which HTTP/2 does not allow (RFC 9113, 8.2.1) (hint: remove the space at its ends)",
  ],
  [
    "trailer-with-capitals.yaml",
    "5:9: entries[0].error.trailers: key `Retry-After-Ms` is not allowed: trailer names are lowercase and start with a letter, like retry-after-ms (hint: write `retry-after-ms`)",
  ],
  [
    "turn-negative.yaml",
    "2:20: entries[0].match.turn: must be at least 0, got the number -1 (hint: the number of assistant messages before this call: 0 on the first call)",
  ],
  [
    "two-actions.yaml",
    "3:5: entries[0]: the entry has 2 actions (reply, error): expected exactly one (hint: an entry answers one way: split it into one entry per action, or remove all but one)",
  ],
  [
    "unclosed-list.yaml",
    "1:10: entries: invalid YAML: the [ list opened here is not closed (hint: add ] after its last item)",
  ],
  [
    "unclosed-mapping.yaml",
    "2:12: entries[0].reply: invalid YAML: the { mapping opened here is not closed (hint: add } after its last item)",
  ],
  [
    "unclosed-quote.yaml",
    "2:12: entries[0].reply: invalid YAML: this double-quoted text is not closed (hint: add the closing \" at the end of the text)",
  ],
  [
    "unclosed-template.yaml",
    "2:24: entries[0].reply: template has a {{ without a closing }} (hint: close the variable: {{last_user}})",
  ],
  [
    "unknown-key-default.yaml",
    "1:1: unknown top-level key `default` (hint: did you mean `defaults`?)",
  ],
  [
    "unknown-key-in-latency.yaml",
    "2:16: entries[0].latency: unknown key `first_bytes` (hint: did you mean `first_byte`?)",
  ],
  [
    "unknown-key-in-match.yaml",
    "3:7: entries[0].match: unknown key `contain` (hint: did you mean `contains`?)",
  ],
  [
    "unknown-key-in-step-entry.yaml",
    "5:7: steps.act[0]: unknown key `mtach` (hint: did you mean `match`?)",
  ],
  [
    "unknown-key-in-tool-call.yaml",
    "5:11: entries[0].reply.tool_calls[0]: unknown key `args` (hint: did you mean `arguments`?)",
  ],
  [
    "unknown-key-latncy.yaml",
    "3:5: entries[0]: unknown key `latncy` (hint: did you mean `latency`?)",
  ],
  [
    "unknown-key-repy.yaml",
    "3:5: entries[0]: unknown key `repy` (hint: did you mean `reply`?)",
  ],
  [
    "unknown-key-tool-call.yaml",
    "4:7: entries[0].reply: unknown key `tool_call` (hint: did you mean `tool_calls`?)",
  ],
  [
    "unknown-key-top-level.yaml",
    "2:1: unknown top-level key `entires` (hint: did you mean `entries`?)",
  ],
  [
    "unknown-status-code.yaml",
    "3:13: entries[0].error.code: expected one of \"CANCELLED\", \"UNKNOWN\", \"INVALID_ARGUMENT\", \"DEADLINE_EXCEEDED\", \"NOT_FOUND\", \"ALREADY_EXISTS\", \"PERMISSION_DENIED\", \"RESOURCE_EXHAUSTED\", \"FAILED_PRECONDITION\", \"ABORTED\", \"OUT_OF_RANGE\", \"UNIMPLEMENTED\", \"INTERNAL\", \"UNAVAILABLE\", \"DATA_LOSS\", \"UNAUTHENTICATED\", got the text \"UNAVAILBLE\" (hint: did you mean \"UNAVAILABLE\"?)",
  ],
  [
    "unknown-template-variable.yaml",
    "2:23: entries[0].reply: unknown template variable {{last_usr}} (hint: did you mean {{last_user}}?)",
  ],
  [
    "unquoted-template-in-arguments.yaml",
    "6:30: entries[0].reply.tool_calls[0].arguments.path: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write \"{{match.1}}\")",
  ],
  [
    "unquoted-template-in-text.yaml",
    "3:12: entries[0].reply: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write \"{{last_user}} to you too\")",
  ],
  [
    "unquoted-template-reply.yaml",
    "2:12: entries[0].reply: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write \"{{last_user}}\")",
  ],
  [
    "usage-over-uint32.yaml",
    "4:30: entries[0].reply.usage.input_tokens: must be at most 2147483647, got the number 5000000000 (hint: input and output tokens add up to total_tokens, a uint32 of modelstub.v1.Usage, so each count is at most half its range)",
  ],
  [
    "version-two.yaml",
    "1:10: version: expected 1, got the number 2 (hint: 1 is the only version of the format so far)",
  ],
  [
    "yaml-alias-bomb.yaml",
    "6:8: f[0]: the aliases stand for more than 524288 characters (512 KiB) of script together: an alias bomb? (hint: each alias repeats its anchor's value, aliases inside that value included: use fewer or smaller aliases, or write the values out)",
  ],
  [
    "yaml-alias-inside-its-anchor.yaml",
    "6:37: entries[0].reply.tool_calls[0].arguments.again: the alias *args is inside the value its anchor &args marks, so it would repeat itself forever (hint: an alias can repeat only a value that ends before it: move it out of that value)",
  ],
  [
    "yaml-unresolved-alias.yaml",
    "2:14: entries[0].latency: the alias *slow has no anchor &slow before it (hint: put &slow before the value to repeat, above this alias (like `latency: &slow 250ms`), or check the spelling)",
  ],

];

async function loadError(file: string): Promise<ScriptError> {
  try {
    await loadScriptFile(file);
  } catch (err) {
    if (err instanceof ScriptError) return err;
    throw err;
  }
  throw new Error(`${file} loaded, but it is in the bad-scripts corpus`);
}

describe("loadScriptFile() on the bad-scripts corpus", () => {
  it("has a pinned message for every fixture, and at least 30 fixtures", () => {
    const files = readdirSync(fileURLToPath(new URL("../fixtures/bad-scripts", import.meta.url))).sort();
    expect(corpus.map(([name]) => name).sort()).toEqual(files);
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  it.each(corpus)("rejects %s with the pinned message", async (name, ...lines) => {
    const err = await loadError(pathOf(name));
    const shown = lines.map((l) => `${pathOf(name)}:${l}`);
    expect(err.code).toBe("ERR_MODELSTUB_SCRIPT");
    expect(err.message).toBe(`cannot load script ${shown.join("\n")}`);
  });

  it("gives every issue a line, a column and a hint, one line each", async () => {
    for (const [name] of corpus) {
      const err = await loadError(pathOf(name));
      for (const issue of err.issues) {
        expect(issue.line, name).toBeGreaterThan(0);
        expect(issue.column, name).toBeGreaterThan(0);
        expect(issue.hint, name).toBeTruthy();
        expect(`${issue.path}${issue.message}${issue.hint}`, name).not.toContain("\n");
      }
    }
  });

  it("prints no Node warning while rejecting an unquoted {{variable}}", async () => {
    const warn = vi.spyOn(process, "emitWarning");
    await loadError(pathOf("unquoted-template-in-arguments.yaml"));
    expect(warn).not.toHaveBeenCalled();
    vi.restoreAllMocks();
  });

  it("names a missing file without a line", async () => {
    const err = await loadError(pathOf("no-such-script.yaml"));
    expect(err.message).toBe(`cannot load script ${pathOf("no-such-script.yaml")}: cannot read the file: no such file (hint: check the path; a relative path starts from the current directory)`);
  });
});

describe("modelstub validate", () => {
  let out = "";
  let err = "";
  function capture() {
    out = "";
    err = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((out += String(chunk)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((err += String(chunk)), true));
  }
  afterEach(() => vi.restoreAllMocks());

  it("exits 1 on a bad file and prints the same lines as the loader, one per issue", async () => {
    const [name, ...lines] = corpus.find(([n]) => n === "entries-key-missing-under-list.yaml")!;
    capture();
    const code = await validate([pathOf("unknown-key-latncy.yaml"), pathOf(name)]);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(out).toBe("");
    const latncy = corpus.find(([n]) => n === "unknown-key-latncy.yaml")!.slice(1);
    expect(err).toBe([...latncy.map((l) => `${pathOf("unknown-key-latncy.yaml")}:${l}`), ...lines.map((l) => `${pathOf(name)}:${l}`)].join("\n") + "\n");
  });

  it("exits 0 on good files and says how many entries each has", async () => {
    capture();
    const code = await validate(["examples/hello.yaml", "examples/default.yaml"]);
    vi.restoreAllMocks();
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe("examples/hello.yaml: ok (1 entry in 1 list)\nexamples/default.yaml: ok (8 entries in 1 list)\n");
  });

  it("exits 1 when any one of several files is bad, and still checks the others", async () => {
    capture();
    const code = await validate(["examples/hello.yaml", pathOf("empty-file.yaml")]);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(out).toBe("examples/hello.yaml: ok (1 entry in 1 list)\n");
    expect(err).toBe(`${pathOf("empty-file.yaml")}:1:1: the script is empty (hint: a script is a mapping with \`entries:\` (a list of replies) or \`steps:\`)\n`);
  });

  it("exits 2 with usage when given no files", async () => {
    capture();
    const code = await validate([]);
    vi.restoreAllMocks();
    expect(code).toBe(2);
    expect(out).toMatch(/^usage: modelstub validate FILE\.\.\./);
  });
});
