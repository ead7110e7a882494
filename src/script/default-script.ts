import type { CompiledScript } from "./compiled-script.js";
import { compileScript } from "./compile-script.js";
import { defaultScriptInput } from "./default-script-input.js";

/**
 * The text of the built-in default script. examples/default.yaml holds the same text (a test
 * keeps the two byte-equal), so users can read and copy it.
 */
export const defaultScriptText =
  '# The built-in default script: `modelstub serve` with no --script serves exactly this text.\n# It drives the probe conversation of remote-execution harnesses, keyed off markers in the\n# user\'s own words. Every entry repeats, so the server answers forever.\nversion: 1\nname: default\nmodels:\n  - id: modelstub-default\n    name: modelstub default script\n    owned_by: modelstub\n    context_length: 128000\nentries:\n  # PROBE-PWD: call the bash tool with `pwd`; on the tool-result turn, quote the output verbatim.\n  - name: probe-pwd-answer\n    match: { contains: PROBE-PWD, tool_result: bash }\n    repeat: true\n    reply: "{{last_tool_result}}"\n  - name: probe-pwd\n    match: { contains: PROBE-PWD }\n    repeat: true\n    reply:\n      tool_calls:\n        - name: bash\n          arguments: { command: pwd }\n  # PROBE-READ <path>: call the read tool on that path; on the tool-result turn, quote the output.\n  - name: probe-read-answer\n    match: { regex: \'PROBE-READ\\s+(\\S+)\', tool_result: read }\n    repeat: true\n    reply: "{{last_tool_result}}"\n  - name: probe-read\n    match: { regex: \'PROBE-READ\\s+(\\S+)\' }\n    repeat: true\n    reply:\n      tool_calls:\n        - name: read\n          arguments: { path: "{{match.1}}" }\n  # PROBE-ECHO: one reply, no tools.\n  - name: probe-echo\n    match: { contains: PROBE-ECHO }\n    repeat: true\n    reply: "PROBE-ECHO ok: {{last_user}}"\n  # PROBE-SLOW: a reply spread over several seconds of streaming (for a link that dies).\n  - name: probe-slow\n    match: { contains: PROBE-SLOW }\n    repeat: true\n    latency: { first_byte: 500ms, per_chunk: 250ms }\n    reply: >-\n      This reply is deliberately slow. It streams one word at a time, a quarter of a second\n      apart, so that a harness can cut the link while it is still arriving and check how the\n      executor recovers.\n  # PROBE-NOCHANGE <path>: claim the work is complete without having changed anything.\n  - name: probe-nochange\n    match: { regex: \'PROBE-NOCHANGE\\s+(\\S+)\' }\n    repeat: true\n    reply: "Done. I have finished the task: {{match.1}} is updated and everything is complete."\n  # Every later turn of that conversation (the harness\'s completion check rejected the claim, in\n  # a user message with no marker): the same claim again, still without a tool call, so a\n  # harness shows whether it checks every claim and stops after its own rejection limit.\n  - name: probe-nochange-rejected\n    match: { conversation_contains: PROBE-NOCHANGE }\n    repeat: true\n    reply: "Done. I have checked again: the task is finished and everything is complete."\n  # Anything else: a short helpful reply that lists the markers.\n  - name: help\n    repeat: true\n    reply: >-\n      modelstub default script. Put one of these markers in your message: PROBE-ECHO,\n      PROBE-PWD, PROBE-READ <path>, PROBE-SLOW, PROBE-NOCHANGE <path>. Or serve your own\n      script with `modelstub serve --script FILE`.\n';

/** The name the built-in default script's problems would be reported under. */
export const defaultScriptFile = "<built-in default script>";

/**
 * The built-in default script, compiled: from its validated form (default-script-input.ts), the
 * very input loadScriptText would compile from the text (a test keeps them equal), so it is the
 * same script without parsing YAML or building the schema.
 */
export function defaultScript(): CompiledScript {
  return compileScript(defaultScriptInput(), defaultScriptFile, (path, message) => {
    // A test compiles the text too and sees no problem: this cannot happen.
    throw new Error(`the built-in default script does not compile: ${path.join(".")}: ${message}`);
  });
}
