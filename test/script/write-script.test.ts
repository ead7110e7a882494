import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { placeholderEntry } from "../../src/script/episode-to-script.js";
import { loadScriptText } from "../../src/script/load-script.js";
import { templateHazard, writeScript, type ScriptDraft } from "../../src/script/write-script.js";

const awkward = [
  "",
  " leading space",
  "trailing space ",
  "a: b",
  "- dash",
  "#hash",
  "yes",
  "null",
  "1e3",
  "'single'",
  '"double"',
  "line\n",
  "\n\nstarts with breaks",
  "crlf\r\nline",
  "tab\there",
  "\x1b[31mred\x1b[0m",
  "del\x7fchar",
  "nel\u0085 and ls\u2028",
  "emoji \ud83d\ude00",
  "  \n  ",
  "%percent",
  "@at",
  "`tick",
  "x\n  indented\n",
];

const view = { model: "", lastUser: "anything at all", lastIsToolResult: false, lastToolName: "", lastToolResult: "", turn: 0 };

describe("writeScript()", () => {
  it("writes texts of any content so the loader reads back exactly them", () => {
    const draft: ScriptDraft = {
      header: ["a header", "with a\nline break and a \x7f"],
      name: "round trip",
      lists: [
        {
          key: "",
          entries: awkward.map((text, i) => ({
            comments: [`entry ${i}: ${text}`],
            entry: { reply: { text, tool_calls: [{ name: "t", arguments: { k: text, [text]: 1 } }] } },
          })),
        },
        {
          key: "a/b:c",
          onExhausted: "cycle",
          entries: [{ comments: [], entry: { latency: "5ms", error: { code: "UNAVAILABLE", message: "m", trailers: { "retry-after-ms": "5" } } } }],
        },
      ],
    };
    const text = writeScript(draft);
    const script = loadScriptText(text, "round-trip.yaml");
    const main = script.lists.get("")!.entries;
    awkward.forEach((t, i) => {
      const action = main[i]!.action;
      expect(action.kind).toBe("reply");
      if (action.kind !== "reply") return;
      expect(action.reply.text.literal).toBe(t);
      expect(JSON.parse(action.reply.toolCalls[0]!.literalArguments!)).toEqual({ k: t, [t]: 1 });
    });
    const step = script.lists.get("a/b:c")!;
    expect(step.onExhausted).toBe("cycle");
    expect(step.entries[0]!.firstByteMs).toBe(5);
    // For people: comments above entries, small mappings on one line, no control characters.
    expect(text).toMatch(/^# a header\n# with a line break and a \?\n/);
    expect(text).toContain('trailers: { retry-after-ms: "5" }');
    expect(text).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/);
    expect(parse(text).name).toBe("round trip");
  });

  it("writes the same text for the same draft", () => {
    const draft: ScriptDraft = { header: [], lists: [{ key: "", entries: [{ comments: ["x"], entry: { reply: "hi" } }] }] };
    expect(writeScript(draft)).toBe(writeScript(structuredClone(draft)));
    expect(writeScript(draft)).toBe("entries:\n  # x\n  - reply: hi\n");
  });

  it("flags texts the loader would read as templates", () => {
    expect(templateHazard("a {{b}}")).toMatch(/template/);
    expect(templateHazard("a { {b} }")).toBeUndefined();
  });
});

describe("the placeholder entry", () => {
  it("matches no request, so it only holds a place", () => {
    const script = loadScriptText(writeScript({ header: [], lists: [{ key: "", entries: [{ comments: [], entry: placeholderEntry }] }] }), "p.yaml");
    const matcher = script.lists.get("")!.entries[0]!.matcher!;
    for (const lastUser of ["", "x", "\n", "anything at all", "\u2028"])
      expect(matcher.test({ ...view, lastUser } as unknown as Parameters<typeof matcher.test>[0])).toBeNull();
  });
});
