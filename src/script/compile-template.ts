import { nearestName } from "../shared/nearest-name.js";
import { maxTemplateOutputBytes, TemplateTooLargeError } from "../shared/template-too-large-error.js";
import type { Template, TemplateContext } from "./compiled-script.js";

type Part = string | ((ctx: TemplateContext) => string);

const simpleVariables: Record<string, (ctx: TemplateContext) => string> = {
  last_user: (c) => c.lastUser,
  last_tool_result: (c) => c.lastToolResult,
  step: (c) => c.step,
  model: (c) => c.model,
  session: (c) => c.session,
  turn: (c) => String(c.turn),
};

/** Every variable name a template may use, for docs and hints. */
export const templateVariables = [...Object.keys(simpleVariables), "match.N", "match.NAME"];

/** What the compiler knows about the entry's regex, to check `{{match.*}}` at load time. */
export interface CaptureInfo {
  groups: number;
  names: readonly string[];
}

/**
 * Compiles `{{name}}` substitutions. Pure substitution: no expressions, no code. An unknown
 * variable, or a capture the entry's regex does not have, is reported at load time through
 * `fail`, never at call time.
 */
export function compileTemplate(source: string, captures: CaptureInfo | undefined, fail: (message: string, hint?: string, needle?: string) => void): Template {
  if (!source.includes("{{")) return { literal: source, render: () => source };
  const parts: Part[] = [];
  const re = /\{\{\s*([^{}]*?)\s*\}\}/g;
  let last = 0;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    if (m.index > last) parts.push(source.slice(last, m.index));
    last = m.index + m[0].length;
    const token = m[0];
    const name = m[1]!;
    const simple = simpleVariables[name];
    if (simple) {
      parts.push(simple);
      continue;
    }
    const capture = /^match\.(\w+)$/.exec(name);
    if (capture) {
      const ref = capture[1]!;
      if (!captures) {
        fail(`template uses {{${name}}} but the entry has no match.regex`, "add match: {regex: ...} with a ( ) group; {{match.*}} reads its captures", token);
        continue;
      }
      if (/^\d+$/.test(ref)) {
        const n = Number(ref);
        if (n > captures.groups) {
          const g = captures.groups;
          fail(
            `template uses {{${name}}} but the regex has ${g === 0 ? "no" : g} capture group${g === 1 ? "" : "s"}`,
            g === 0
              ? "{{match.0}} is the whole match; add a ( ) group to the regex to capture part of it"
              : `use {{match.0}} (the whole match)${g === 1 ? " or {{match.1}}" : ` to {{match.${g}}}`}, or add a ( ) group to the regex`,
            token,
          );
          continue;
        }
        parts.push((c) => c.captures?.[n] ?? "");
      } else {
        if (!captures.names.includes(ref)) {
          const near = nearestName(ref, captures.names);
          const named = captures.names.map((g) => `{{match.${g}}}`).join(", ");
          fail(
            `template uses {{${name}}} but the regex has no group named ${ref}`,
            near ? `did you mean {{match.${near}}}?` : named ? `the regex's named groups are ${named}` : `name a group in the regex: (?<${ref}>...)`,
            token,
          );
          continue;
        }
        parts.push((c) => c.captures?.groups?.[ref] ?? "");
      }
      continue;
    }
    const near = nearestName(name, Object.keys(simpleVariables));
    fail(`unknown template variable {{${name}}}`, near ? `did you mean {{${near}}}?` : `variables are ${templateVariables.join(", ")}`, token);
  }
  // A `{{` that never closes is a typo for a variable, not text: say so at load time.
  const unclosed = source.slice(last).indexOf("{{");
  if (unclosed >= 0 && !source.slice(last + unclosed).includes("}}")) {
    const rest = source.slice(last + unclosed);
    fail(`template has a {{ without a closing }}`, "close the variable: {{last_user}}", rest.slice(0, 24));
  }
  if (last < source.length) parts.push(source.slice(last));
  return {
    literal: undefined,
    render(ctx, escapeValue) {
      let out = "";
      for (const p of parts) {
        out += typeof p === "string" ? p : escapeValue ? escapeValue(p(ctx)) : p(ctx);
        if (out.length > maxTemplateOutputBytes) throw new TemplateTooLargeError(out.length);
      }
      if (Buffer.byteLength(out) > maxTemplateOutputBytes) throw new TemplateTooLargeError(Buffer.byteLength(out));
      return out;
    },
  };
}
