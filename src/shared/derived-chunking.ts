import { splitChunks, type Chunking } from "./split-chunks.js";

/*
 * How `script from-episode` cuts a streamed reply when the episode tells only how many chunks it
 * sent: shared by script/entry-from-call.ts and the engine, which writes an episode's
 * sent_text_chunks only where this cut would not give what the client got.
 */

/** How many stream chunks a reply makes: its text's chunks, and per tool call a header and its argument fragments. */
function chunkCount(textChunks: number, args: readonly string[], rule: Chunking): number {
  return textChunks + args.reduce((n, a) => n + 1 + splitChunks(a, rule).length, 0);
}

/** `text` cut into exactly `n` chunks (1 <= n <= its code points): whole words where it has enough, else code points. */
function cutInto(text: string, n: number): string[] {
  const words = splitChunks(text, { kind: "words" });
  const units = words.length >= n ? words : Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(units.slice(Math.floor((i * units.length) / n), Math.floor(((i + 1) * units.length) / n)).join(""));
  return out;
}

/**
 * The chunking of a streamed reply that sends `sent` chunks: the default (words) when it does,
 * else explicit text chunks (tool call arguments keep the words rule, which explicit chunks do
 * not touch); undefined when no chunking of this text sends that many.
 */
export function chunkingFor(
  text: string,
  args: readonly string[],
  sent: number,
  atLeast: boolean,
): { chunks?: string[]; chunking?: { chars: number } } | undefined {
  const words = splitChunks(text, { kind: "words" }).length;
  const byWords = chunkCount(words, args, { kind: "words" });
  if (byWords === sent || (atLeast && byWords >= sent)) return {};
  if (atLeast) return chunkCount(Array.from(text).length, args, { kind: "chars", n: 1 }) >= sent ? { chunking: { chars: 1 } } : undefined;
  const textChunks = sent - chunkCount(0, args, { kind: "words" });
  if (text === "" || textChunks < 1 || textChunks > Array.from(text).length) return undefined;
  return { chunks: cutInto(text, textChunks) };
}

/**
 * The text chunks a from-episode script sends before the break of a stream that broke after
 * `sent` chunks, its reply being `text` and tool calls with `args`: the chunking chunkingFor
 * gives, cut to `sent`. The engine writes an episode's sent_text_chunks only where what the
 * client was sent differs from this, so old episodes keep their bytes.
 */
export function derivedSentText(text: string, args: readonly string[], sent: number): string[] | undefined {
  const chunking = chunkingFor(text, args, sent, true);
  if (!chunking) return undefined;
  return (chunking.chunking ? Array.from(text) : splitChunks(text, { kind: "words" })).slice(0, sent);
}
