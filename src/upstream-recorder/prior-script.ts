import { dirname } from "node:path";
import { isMap, isSeq, parseDocument, type Node } from "yaml";
import type { GenerateRequest } from "../../gen/modelstub/v1/model_pb.js";
import { viewRequest } from "../engine/request-view.js";
import type { CompiledEntry, CompiledScript } from "../script/compiled-script.js";
import type { DraftEntry, DraftList } from "../script/write-script.js";
import { requestFacts } from "../shared/request-fingerprint.js";
import { loadScriptText, readSourceFile, validatedScriptInput } from "../script/load-script.js";
import { textFilesIn } from "../script/resolve-text-files.js";
import type { EntryInput, ListInput, ScriptInput } from "../script/script-schema.js";

/**
 * A script `record --record-mode new-episodes` extends: its entries answer the requests they
 * match, as a cassette does, and the recorder writes them back in place (with their comments),
 * the new recordings after them.
 */
export interface PriorScript {
  /** The script as written (its `text_file`s still names, not texts). */
  input: ScriptInput;
  /** The script compiled, its `text_file`s read. */
  compiled: CompiledScript;
  /** The comment lines above entry `index` of the list `key` ("" for the main list). */
  comments(key: string, index: number): string[];
}

/** A list's entries, whatever its form. */
export const entriesOf = (list: ListInput): EntryInput[] => (Array.isArray(list) ? list : list.entries);

/** Reads a script to extend; its problems throw a ScriptError with file, line and field, as `validate` says them. */
export async function readPriorScript(path: string): Promise<PriorScript> {
  const text = await readSourceFile(path);
  const compiled = loadScriptText(text, path, textFilesIn(dirname(path)));
  const input = validatedScriptInput(text, path);
  const doc = parseDocument(text);
  type Commented = Node & { commentBefore?: string | null };
  const seqOf = (key: string): Commented | undefined => {
    let node = doc.getIn(key === "" ? ["entries"] : ["steps", key], true) as Node | undefined;
    if (isMap(node)) node = node.get("entries", true) as Node | undefined;
    return isSeq(node) ? node : undefined;
  };
  return {
    input,
    compiled,
    comments(key, index) {
      const seq = seqOf(key);
      const item = (seq && isSeq(seq) ? seq.items[index] : undefined) as Commented | undefined;
      // The comment above a list's first item is the list's own to the parser.
      const text = item?.commentBefore ?? (index === 0 ? seq?.commentBefore : undefined) ?? "";
      return text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "");
    },
  };
}

/** A prior script's entries as the recorder starts from them, and which of them have answered. */
export class PriorEntries {
  /** Its lists' entries, to write back in place (with their comments), by list key. */
  readonly drafts = new Map<string, DraftEntry[]>();
  /** The lists that say what happens when they run out. */
  readonly onExhausted = new Map<string, DraftList["onExhausted"]>();
  /** Its models' ids, in order. */
  readonly models: string[];
  /** How many entries it has in all. */
  readonly count: number;
  private readonly used = new Map<string, number[]>();

  constructor(readonly script: PriorScript) {
    const lists: [string, ListInput][] = [];
    if (script.input.entries) lists.push(["", script.input.entries]);
    for (const [key, list] of Object.entries(script.input.steps ?? {})) lists.push([key, list]);
    let count = 0;
    for (const [key, list] of lists) {
      const entries = entriesOf(list);
      this.drafts.set(
        key,
        entries.map((entry, i) => ({ comments: script.comments(key, i), entry })),
      );
      this.used.set(
        key,
        entries.map(() => 0),
      );
      if (!Array.isArray(list) && list.on_exhausted) this.onExhausted.set(key, list.on_exhausted);
      count += entries.length;
    }
    this.count = count;
    this.models = (script.input.models ?? []).map((m) => m.id);
  }

  /**
   * The first entry of list `step`, in file order, with uses left, whose `match` holds and whose
   * recorded `request:` the request matches, as a cassette looks one up; that use is counted.
   * Undefined when none does: the call goes upstream.
   */
  take(step: string, request: GenerateRequest): CompiledEntry | undefined {
    const list = this.script.compiled.lists.get(step);
    const used = this.used.get(step);
    if (!list || !used) return undefined;
    const view = viewRequest(request, this.script.compiled);
    const facts = requestFacts(request);
    for (let i = 0; i < list.entries.length; i++) {
      const e = list.entries[i]!;
      if (used[i]! >= e.limit) continue;
      if (e.matcher && e.matcher.test(view) === null) continue;
      if (e.request && e.request.differences(facts).length > 0) continue;
      used[i]!++;
      return e;
    }
    return undefined;
  }
}
