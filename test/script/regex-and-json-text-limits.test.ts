import { describe, expect, it } from "vitest";
import { loadScriptText } from "../../src/script/load-script.js";
import { ScriptError } from "../../src/index.js";

describe("tool call arguments written as a JSON text", () => {
  it("refuses 5,000 nested brackets instead of overflowing the stack", () => {
    const text = `entries:\n  - reply:\n      tool_calls:\n        - name: t\n          arguments: '${"[".repeat(5000)}${"]".repeat(5000)}'\n`;
    expect(() => loadScriptText(text, "args.yaml")).toThrow(
      "cannot load script args.yaml:5:22: entries[0].reply.tool_calls[0].arguments: arguments text is not valid JSON: lists and mappings nest deeper than 64 levels here at character 65 (hint: write the arguments as a mapping, and modelstub writes the JSON for you)",
    );
  });
});

describe("match.regex limits", () => {
  const regexError = (regex: string) => {
    try {
      loadScriptText(`entries:\n  - match: { regex: '${regex}' }\n    reply: x\n`, "r.yaml");
    } catch (err) {
      if (err instanceof ScriptError) return err.message;
    }
    throw new Error("loaded");
  };

  it("refuses a regex that would compile to a huge program without compiling it", () => {
    // 290 times a{1000}: RE2 would need a second to compile its 290,000 instructions.
    expect(regexError("a{1000}".repeat(290))).toBe(
      "cannot load script r.yaml:2:21: entries[0].match.regex: the regex is too large: it compiles to more than 2000 steps, and the most is 500 (matching costs up to that many steps per character) (hint: counts like {1,500} or .{0,300} repeat their part that many times: write + or * instead, or match a shorter part)",
    );
  });

  it("refuses lookbehinds and named backreferences, and regexes over 2,048 characters", () => {
    expect(regexError("(?<=v)1")).toContain(
      "r.yaml:2:21: entries[0].match.regex: invalid regex: (?<= starts a lookbehind, which matching cannot run in linear time (hint: ",
    );
    expect(regexError("(?<w>a)\\k<w>")).toContain("invalid regex: \\k<w> is a backreference");
    expect(regexError("a".repeat(2049))).toContain("entries[0].match.regex: the regex is 2049 characters long; the most is 2048 (hint: ");
  });

  it("keeps JavaScript's meaning of ., \\s, \\S, \\uXXXX and []", () => {
    const captures = (regex: string, text: string) => {
      const stub = loadScriptText(`entries:\n  - match: { regex: '${regex}' }\n    reply: x\n`, "r.yaml");
      return stub.lists.get("")!.entries[0]!.matcher!.regex!.exec(text)?.slice(0) ?? null;
    };
    expect(captures("a(.)c", "a\rc")).toBeNull();
    expect(captures("a\\s(\\S+)", "a\u00a0b\u2003")).toEqual(["a\u00a0b", "b"]);
    expect(captures("\\u0041(x)", "Ax")).toEqual(["Ax", "x"]);
    expect(captures("a[]b", "ab")).toBeNull();
    expect(captures("a[^]b", "a\nb")).toEqual(["a\nb"]);
  });
});
