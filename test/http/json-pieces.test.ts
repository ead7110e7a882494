import { describe, expect, it } from "vitest";
import { escapes, JoinedText, jsonPieces, pieceChars, plainPieceChars } from "../../src/http/json-pieces.js";
import { rawRequest, startHttpStub } from "./http-stub.js";

/*
 * An SSE event that carries a whole reply (the Responses API's closing events repeat it four
 * times) is written in pieces, made as the response takes them (issue 27, item 3): these pin the
 * pieces to JSON.stringify, byte for byte.
 */

/** A long text with what JSON escapes, surrogate pairs where a piece could end, and lone surrogates. */
function awkwardText(length: number): string {
  const alphabet = ["a", " ", '"', "\\", "\n", "\u0001", "é", "\u2028", "\ud83d\ude00", "\ud83d", "\ude00", "x"];
  let seed = 3;
  let out = "";
  while (out.length < length) out += alphabet[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % alphabet.length];
  return out;
}

describe("JSON written in pieces", () => {
  it("is JSON.stringify's text, byte for byte, a long string cut into pieces of at most 8 KiB of text", () => {
    for (const length of [pieceChars - 1, pieceChars, pieceChars + 1, 3 * pieceChars + 7, 100_000]) {
      const text = awkwardText(length);
      const value = { type: "x", n: 1, list: [text, null, { deep: text }], skipped: undefined, ok: true };
      const pieces = [...jsonPieces("data: ", value, "\n\n")];
      expect(pieces.join(""), `length ${length}`).toBe(`data: ${JSON.stringify(value)}\n\n`);
      // Six bytes is the most one character of text becomes (a control character's \u0001).
      for (const p of pieces) expect(p.length).toBeLessThanOrEqual(12 * pieceChars + 64);
      expect(pieces.length).toBeGreaterThan(length > pieceChars ? 2 : 0);
    }
  });

  it("writes a text kept in parts as the string they join to, a pair split across two parts included", () => {
    const text = awkwardText(50_000);
    const joined = new JoinedText();
    // Parts cut anywhere, even between the two halves of a surrogate pair.
    for (let at = 0; at < text.length; at += 777) joined.add(text.slice(at, at + 777));
    expect(joined.length).toBe(text.length);
    expect([...jsonPieces("", { text: joined }, "")].join("")).toBe(JSON.stringify({ text }));
    // Small enough for one piece, it is written at once, through its toJSON.
    const small = new JoinedText();
    small.add("\ud83d");
    small.add("\ude00 ok");
    expect([...jsonPieces("", [small], "")]).toEqual([JSON.stringify(["\ud83d\ude00 ok"])]);
  });

  it("writes a text with nothing to escape as it is, and one part to escape makes the whole text escaped", () => {
    const plain = "word ".repeat(20_000);
    const joined = new JoinedText();
    for (let at = 0; at < plain.length; at += 8192) joined.add(plain.slice(at, at + 8192));
    expect(joined.plain).toBe(true);
    expect([...jsonPieces("", { text: joined }, "")].join("")).toBe(JSON.stringify({ text: plain }));
    expect([...jsonPieces("", [plain], "")].join("")).toBe(JSON.stringify([plain]));
    joined.add('a "quote", a \\ and a \n');
    expect(joined.plain).toBe(false);
    expect([...jsonPieces("", { text: joined }, "")].join("")).toBe(JSON.stringify({ text: `${plain}a "quote", a \\ and a \n` }));
  });

  it("tells whether JSON escapes a character of a long text exactly as JSON.stringify does, wherever the character is", () => {
    // A long ASCII text is scanned four characters at a time: every character JSON escapes, and
    // its neighbours that it does not (space, DEL, '!', '#', '[', ']'), at each of the four
    // places in a word, near the start, the end and the padding.
    const stringifyEscapes = (s: string) => JSON.stringify(s) !== `"${s}"`;
    const escaped = ['"', "\\", "\u0000", "\u0001", "\t", "\n", "\u001f"];
    const notEscaped = [" ", "\u007f", "!", "#", "[", "]", "~", "A"];
    for (const length of [1023, 1024, 1025, 1026, 1027, 4099]) {
      const base = "word ".repeat(1000).slice(0, length);
      expect(escapes(base), `plain, length ${length}`).toBe(false);
      for (const at of [0, 1, 2, 3, 4, 517, length - 4, length - 3, length - 2, length - 1]) {
        for (const c of [...escaped, ...notEscaped]) {
          const text = base.slice(0, at) + c + base.slice(at + 1);
          expect(escapes(text), JSON.stringify({ length, at, c })).toBe(stringifyEscapes(text));
        }
      }
    }
    // Text past ASCII: any surrogate counts (JSON.stringify, which makes the escape, tells a pair from a lone one).
    const wide = "word ".repeat(300);
    for (const c of ["é", "\u2028", "\ud83d\ude00", "\ud83d", "\ude00"]) expect(escapes(wide + c), JSON.stringify(c)).toBe(/[\ud800-\udfff]/.test(c));
    expect(escapes(`${wide}é"`)).toBe(true);
  });

  it("writes a plain text in pieces of at most 48 KiB, as an escaped one, in twice the characters", () => {
    // Three bytes of UTF-8 a character, the most a plain one takes, in deltas of 16 KiB.
    const wide = "日本語のテキスト".repeat(25_000);
    const joined = new JoinedText();
    for (let at = 0; at < wide.length; at += 16_384) joined.add(wide.slice(at, at + 16_384));
    expect(joined.plain).toBe(true);
    const pieces = [...jsonPieces("", { text: joined }, "")];
    expect(pieces.join("")).toBe(JSON.stringify({ text: wide }));
    for (const p of pieces) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(48 * 1024 + 16);
    // Each 16 KiB delta goes whole: a piece, not four.
    expect(pieces.filter((p) => p.length === 16_384)).toHaveLength(Math.floor(wide.length / 16_384));
    expect(plainPieceChars).toBe(2 * pieceChars);
  });

  it("leaves a small value in one piece, made at once", () => {
    const value = { type: "ping" };
    expect(jsonPieces("event: ping\ndata: ", value, "\n\n")).toEqual([`event: ping\ndata: {"type":"ping"}\n\n`]);
  });
});

describe("a long streamed Responses answer", () => {
  it("closes with events that carry the whole echo, each a valid JSON event", async () => {
    const h = await startHttpStub(undefined);
    try {
      const input = `PROBE-ECHO ${awkwardText(60_000)}`;
      const s = { "x-modelstub-session": "long" };
      const streamed = await rawRequest(h.base, "POST", "/v1/responses", { model: "m", stream: true, input }, s);
      const events = String(streamed.body)
        .split("\n\n")
        .filter((e) => e.length > 0)
        .map(
          (e) =>
            JSON.parse(e.slice(e.indexOf("\ndata: ") + "\ndata: ".length)) as {
              type: string;
              text?: string;
              part?: { text: string };
              item?: { content: { text: string }[] };
              response?: { output: { content: { text: string }[] }[] };
            },
        );
      const text = `PROBE-ECHO ok: ${input}`;
      expect(events.find((e) => e.type === "response.output_text.done")?.text).toBe(text);
      expect(events.find((e) => e.type === "response.content_part.done")?.part?.text).toBe(text);
      expect(events.find((e) => e.type === "response.output_item.done")?.item?.content[0]?.text).toBe(text);
      const completed = events.at(-1)!;
      expect(completed.type).toBe("response.completed");
      expect(completed.response!.output[0]!.content[0]!.text).toBe(text);
    } finally {
      await h.close();
    }
  });
});
