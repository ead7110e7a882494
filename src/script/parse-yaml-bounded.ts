import { Composer, Lexer, Parser, YAMLParseError, type CST, type Document, type LineCounter } from "yaml";
import { maxNestingDepth } from "./script-limits.js";

/*
 * yaml's parseDocument, with the nesting depth checked while the text is tokenized and before
 * anything recursive runs. The lexer and the CST parser are linear and keep their own stack;
 * the composer that turns tokens into a document recurses once per level, and a few thousand
 * levels of it (`[[[[...`, `- - - -`, `? ? ?`, indentation) overflowed the stack or, deep in it,
 * aborted the whole process (V8 failing to compile a regex: "RegExpCompiler Allocation failed",
 * which no try, worker or resource limit contains). The parser's stack is the nesting of
 * the text read so far, so the first token that takes it past maxNestingDepth stops the read:
 * `[` x 250,000 is refused after 65 tokens, in microseconds.
 */

/** Where the text first nests deeper than maxNestingDepth: the deep list or mapping's start, and the field path to it. */
export interface TooDeep {
  offset: number;
  path: (string | number)[];
}

const isCollection = (t: CST.Token): t is CST.BlockMap | CST.BlockSequence | CST.FlowCollection =>
  t.type === "block-map" || t.type === "block-seq" || t.type === "flow-collection";

/** A key's text as the document would hold it, for the path (quoted keys unquoted; anything else as written). */
function keyText(token: CST.Token | undefined): string {
  if (!token || !("source" in token)) return "";
  const s = token.source;
  if (token.type === "double-quoted-scalar") {
    try {
      return JSON.parse(s) as string;
    } catch {
      return s.slice(1, -1);
    }
  }
  if (token.type === "single-quoted-scalar") return s.slice(1, -1).replace(/''/g, "'");
  return s;
}

/** The field path down the open collections to the last one, read from the parser's stack. */
function pathOf(open: readonly (CST.BlockMap | CST.BlockSequence | CST.FlowCollection)[]): (string | number)[] {
  const path: (string | number)[] = [];
  for (const c of open.slice(0, -1)) {
    const last = c.items[c.items.length - 1];
    if (c.type === "block-seq") path.push(Math.max(0, c.items.length - 1));
    else if (c.type === "flow-collection" && c.start.source === "[") {
      // The nested collection is not attached yet: it belongs to an item a comma opened, or to a new one.
      path.push(!last ? 0 : "key" in last || "value" in last ? c.items.length : c.items.length - 1);
    } else path.push(keyText(last?.key ?? undefined));
  }
  return path;
}

/** The collection past maxNestingDepth on the parser's stack, if the text so far nests that deep. */
function tooDeepOn(stack: readonly CST.Token[]): TooDeep | undefined {
  // Cheap first: the stack holds the document and at most one scalar besides its collections.
  if (stack.length <= maxNestingDepth + 1) return undefined;
  const open = stack.filter(isCollection);
  if (open.length <= maxNestingDepth) return undefined;
  const deep = open.slice(0, maxNestingDepth + 1);
  return { offset: deep[maxNestingDepth]!.offset, path: pathOf(deep) };
}

/**
 * Parses one YAML document as `parseDocument(text, options)` does, or answers where it nests
 * deeper than maxNestingDepth without composing it. Linear in the text; no recursion deeper
 * than maxNestingDepth levels (and the composer's few frames per level) ever runs.
 */
export function parseYamlBounded(
  text: string,
  options: { lineCounter: LineCounter; uniqueKeys: boolean; strict: boolean },
): { doc: Document.Parsed } | { tooDeep: TooDeep } {
  const parser = new Parser(options.lineCounter.addNewLine);
  // As Parser.parse does before its first token.
  options.lineCounter.addNewLine(0);
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    const deep = tooDeepOn(parser.stack);
    if (deep) return { tooDeep: deep };
  }
  for (const token of parser.end()) tokens.push(token);
  const composer = new Composer({ prettyErrors: false, uniqueKeys: options.uniqueKeys, strict: options.strict });
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      // As parseDocument says it.
      doc.errors.push(
        new YAMLParseError([next.range[0], next.range[1]], "MULTIPLE_DOCS", "Source contains multiple documents; please use YAML.parseAllDocuments()"),
      );
      break;
    }
  }
  return { doc: doc! };
}
