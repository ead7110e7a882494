import type { ScriptInput } from "./script-schema.js";

/**
 * The built-in default script as the schema validates it (validatedScriptInput of
 * defaultScriptText): `serve` compiles this, so it parses no YAML and builds no schema to start.
 * Written from default-script.ts's text; test/script/default-script-input.test.ts keeps the two
 * equal (a change to the text must be made here too: the failing test shows the new value).
 */
export function defaultScriptInput(): ScriptInput {
  return {
    version: 1,
    name: "default",
    models: [
      {
        id: "modelstub-default",
        name: "modelstub default script",
        owned_by: "modelstub",
        context_length: 128000,
      },
    ],
    entries: [
      {
        name: "probe-pwd-answer",
        match: {
          contains: "PROBE-PWD",
          tool_result: "bash",
        },
        repeat: true,
        reply: "{{last_tool_result}}",
      },
      {
        name: "probe-pwd",
        match: {
          contains: "PROBE-PWD",
        },
        repeat: true,
        reply: {
          tool_calls: [
            {
              name: "bash",
              arguments: {
                command: "pwd",
              },
            },
          ],
        },
      },
      {
        name: "probe-read-answer",
        match: {
          regex: "PROBE-READ\\s+(\\S+)",
          tool_result: "read",
        },
        repeat: true,
        reply: "{{last_tool_result}}",
      },
      {
        name: "probe-read",
        match: {
          regex: "PROBE-READ\\s+(\\S+)",
        },
        repeat: true,
        reply: {
          tool_calls: [
            {
              name: "read",
              arguments: {
                path: "{{match.1}}",
              },
            },
          ],
        },
      },
      {
        name: "probe-echo",
        match: {
          contains: "PROBE-ECHO",
        },
        repeat: true,
        reply: "PROBE-ECHO ok: {{last_user}}",
      },
      {
        name: "probe-slow",
        match: {
          contains: "PROBE-SLOW",
        },
        repeat: true,
        latency: {
          first_byte: "500ms",
          per_chunk: "250ms",
        },
        reply:
          "This reply is deliberately slow. It streams one word at a time, a quarter of a second apart, so that a harness can cut the link while it is still arriving and check how the executor recovers.",
      },
      {
        name: "probe-nochange",
        match: {
          regex: "PROBE-NOCHANGE\\s+(\\S+)",
        },
        repeat: true,
        reply: "Done. I have finished the task: {{match.1}} is updated and everything is complete.",
      },
      {
        name: "probe-nochange-rejected",
        match: {
          conversation_contains: "PROBE-NOCHANGE",
        },
        repeat: true,
        reply: "Done. I have checked again: the task is finished and everything is complete.",
      },
      {
        name: "help",
        repeat: true,
        reply:
          "modelstub default script. Put one of these markers in your message: PROBE-ECHO, PROBE-PWD, PROBE-READ <path>, PROBE-SLOW, PROBE-NOCHANGE <path>. Or serve your own script with `modelstub serve --script FILE`.",
      },
    ],
  };
}
