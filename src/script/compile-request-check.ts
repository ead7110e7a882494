import type { RequestFacts, RequestCheck } from "./compiled-script.js";
import type { Report } from "./report.js";
import type { RequestMatchInput } from "./script-schema.js";
import { quoteClipped } from "../shared/clip-text.js";
import { sha256Hex } from "../shared/request-fingerprint.js";

type RecordedText = NonNullable<RequestMatchInput["last_user"]>;

/** How much of a text a difference quotes: enough to tell two turns apart, small enough for a status message. */
const quoted = 80;

const q = (text: string) => quoteClipped(text, quoted);

/** Whether `got` is the recorded text: the same text, or, for a long one, the same SHA-256. */
function same(want: RecordedText, got: string): boolean {
  return typeof want === "string" ? want === got : sha256Hex(got) === want.sha256;
}

/** A recorded text as a difference quotes it. */
function show(want: RecordedText): string {
  return typeof want === "string" ? q(want) : `the text beginning ${q(want.begins ?? "")} (sha256 ${want.sha256.slice(0, 12)}...)`;
}

const list = (names: readonly string[]) => `[${names.map((n) => quoteClipped(n, 40)).join(", ")}]`;

/**
 * Compiles an entry's `request:` at `path`: digest alone, or the readable keys, where a key left
 * out means the request has none of it (no last user text, no tool results, no tools offered).
 */
export function compileRequestCheck(r: RequestMatchInput, path: (string | number)[], report: Report): RequestCheck {
  if (r.digest !== undefined) {
    const other = (["last_user", "tool_results", "tools"] as const).find((k) => r[k] !== undefined);
    if (other)
      report(
        path,
        `digest and ${other} both given: a digest stands for the whole request`,
        "keep digest alone (record --match digest), or the readable keys alone (record's default)",
        { key: other },
      );
    const digest = r.digest;
    return {
      differences(facts: RequestFacts) {
        const got = facts.digest();
        return got === digest
          ? []
          : [`expected request digest ${digest.slice(0, 19)}..., got ${got.slice(0, 19)}... (last user ${q(facts.fingerprint().lastUser)})`];
      },
    };
  }
  const lastUser = r.last_user ?? "";
  const results = r.tool_results ?? [];
  const tools = r.tools ?? [];
  return {
    differences(facts: RequestFacts) {
      const fp = facts.fingerprint();
      const out: string[] = [];
      if (!same(lastUser, fp.lastUser)) out.push(`expected last user ${show(lastUser)}, got ${q(fp.lastUser)}`);
      if (results.length !== fp.toolResults.length) {
        out.push(
          `expected ${results.length} tool result(s) since the last assistant turn ${list(results.map((t) => t.tool))}, got ${fp.toolResults.length} ${list(fp.toolResults.map((t) => t.tool))}`,
        );
      } else {
        results.forEach((want, i) => {
          const got = fp.toolResults[i]!;
          if (want.tool !== got.tool) out.push(`tool result ${i + 1}: expected tool ${quoteClipped(want.tool, 40)}, got ${quoteClipped(got.tool, 40)}`);
          else if (!same(want.content, got.content))
            out.push(`tool result ${i + 1} (${quoteClipped(want.tool, 40)}): expected ${show(want.content)}, got ${q(got.content)}`);
        });
      }
      if (tools.length !== fp.tools.length || tools.some((t, i) => t !== fp.tools[i])) out.push(`expected tools offered ${list(tools)}, got ${list(fp.tools)}`);
      return out;
    },
  };
}
