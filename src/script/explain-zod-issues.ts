import { nearestName } from "../shared/nearest-name.js";
import { describeValue, kindOf, valueAt } from "./describe-value.js";
import { acceptsKind, defOf, descriptionAt, expectedWords, keysOf, schemasAt, unionOptions, type AnySchema, type Issue } from "./schemas-at.js";
import { durationHint, durationKeys, tooBigHints, typeHint } from "./type-hint.js";
import { longestGuess, unknownKeyHint } from "./unknown-key-hint.js";

/** A validation problem at a path of the input, before it is located in the file. */
export interface PathIssue {
  path: (string | number)[];
  /** For a problem with a key itself (unknown, misspelt): the key, so the locator points at it. */
  key?: string;
  /** Text inside the node's source to point at (a `{{variable}}` in a long reply). */
  needle?: string;
  message: string;
  hint?: string;
}

/**
 * A union failed. Explain the branch that fits the value's kind (a mapping given for a
 * mapping-or-text reply is explained as a mapping: "unknown key `txt`" helps, "expected a
 * text or a mapping" does not). Undefined when no branch fits, so the union's summary is said.
 */
function unionBranch(issue: Extract<Issue, { code: "invalid_union" }>, options: AnySchema[], value: unknown): Issue[] | undefined {
  const kind = kindOf(value);
  const fitting = issue.errors.filter((branch, i) => {
    const option = options[i];
    if (option && !acceptsKind(option, kind)) return false;
    return !branch.some((b) => b.path.length === 0 && b.code === "invalid_type");
  });
  if (fitting.length === 0) return undefined;
  return fitting.reduce((a, b) => (b.length < a.length ? b : a));
}

/**
 * How many "did you mean" searches one script gets. Past them an unknown key or value is still
 * reported, with the plain hint (the allowed keys, the field's description): a script with
 * thousands of mistakes shows only the first ones anyway, and must not take seconds to explain.
 */
const guessBudget = 100;

/** Turns zod's issues into path issues with messages and hints a person can act on. */
export function explainZodIssues(
  issues: readonly Issue[],
  input: unknown,
  schema: AnySchema,
  base: PropertyKey[] = [],
  budget = { guesses: guessBudget },
): PathIssue[] {
  const out: PathIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path] as (string | number)[];
    const value = valueAt(input, path);
    const got = describeValue(value);
    const last = path[path.length - 1];
    switch (issue.code) {
      case "invalid_union": {
        const options = unionOptions(schema, path);
        const branch = unionBranch(issue, options, value);
        if (branch) {
          out.push(...explainZodIssues(branch, input, schema, path, budget));
          break;
        }
        const expected = options.length ? options.map(expectedWords).join(", or ") : "";
        const said = issue.message && issue.message !== "Invalid input" ? issue.message : `expected ${expected}`;
        out.push({ path, message: `${said}, got ${got}`, hint: typeHint(expected, value, path) });
        break;
      }
      case "unrecognized_keys": {
        const here = schemasAt(schema, path).filter((s) => defOf(s).type === "object");
        const allowed = keysOf(here);
        for (const key of issue.keys) {
          const hint =
            budget.guesses-- > 0 ? unknownKeyHint(key, allowed, schema, path) : allowed.length ? `allowed keys here: ${allowed.join(", ")}` : undefined;
          out.push({ path, key, message: path.length ? `unknown key \`${key}\`` : `unknown top-level key \`${key}\``, hint });
        }
        break;
      }
      case "invalid_type": {
        if (path.length === 0) {
          out.push({
            path,
            message: `a script is a mapping with \`entries:\` or \`steps:\`, got ${got}`,
            hint: Array.isArray(value) ? "put the list under `entries:`" : "start the file with `entries:` and a list of replies",
          });
          break;
        }
        const here = schemasAt(schema, path);
        const expected = here.length ? [...new Set(here.map(expectedWords))].join(", or ") : issue.expected;
        if (value === undefined) {
          out.push({ path, message: `is required: expected ${expected}`, hint: `add \`${String(last)}:\` to this mapping` });
        } else {
          out.push({ path, message: `expected ${expected}, got ${got}`, hint: typeHint(expected, value, path) });
        }
        break;
      }
      case "invalid_value": {
        const values = issue.values;
        const near = typeof value === "string" && value.length <= longestGuess && budget.guesses-- > 0 ? nearestName(value, values.map(String)) : undefined;
        const single = values.length === 1;
        let hint: string | undefined = near ? `did you mean ${JSON.stringify(near)}?` : undefined;
        if (single && values[0] === true) hint = `write \`${String(last)}: true\`, or remove the key`;
        else if (last === "version") hint = "1 is the only version of the format so far";
        else if (!hint && typeof value === "string" && values.some((v) => String(v).toLowerCase() === value.toLowerCase())) hint = "values are case-sensitive";
        out.push({
          path,
          message: `expected ${single ? JSON.stringify(values[0]) : `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`}, got ${got}`,
          hint,
        });
        break;
      }
      case "too_small": {
        if (issue.origin === "array") {
          out.push({ path, message: `needs at least ${issue.minimum} item${issue.minimum === 1 ? "" : "s"}`, hint: "give an item, or remove the key" });
        } else if (issue.origin === "string") {
          out.push({ path, message: "must not be empty", hint: `give ${String(last)} a value` });
        } else {
          const bound = issue.inclusive ? `at least ${issue.minimum}` : `more than ${issue.minimum}`;
          const duration = durationKeys.has(String(last));
          const hint = duration
            ? "a duration cannot be negative; use 0 for no wait"
            : last === "times"
              ? "times counts uses: 1 or more; repeat: true for no limit"
              : undefined;
          out.push({ path, message: `must be ${bound}, got ${got}`, hint });
        }
        break;
      }
      case "too_big":
        out.push({ path, message: `must be at most ${issue.maximum}, got ${got}`, hint: tooBigHints[String(last)] });
        break;
      case "invalid_format": {
        const duration = issue.message.includes("duration");
        out.push({ path, message: `${issue.message.replace(/^Invalid string: /, "")}, got ${got}`, hint: duration ? durationHint(value) : undefined });
        break;
      }
      case "invalid_key": {
        const key = String(last);
        const inner = issue.issues[0]?.message ?? "this key is not allowed";
        const parent = path.slice(0, -1);
        const lowered = key.toLowerCase();
        const fixed = /^[a-z][a-z0-9._-]*$/.test(lowered) ? lowered : undefined;
        out.push({ path: parent, key, message: `key \`${key}\` is not allowed: ${inner}`, hint: fixed ? `write \`${fixed}\`` : undefined });
        break;
      }
      default:
        out.push({ path, message: `${issue.message}, got ${got}` });
    }
  }
  // A message without a better hint gets the field's own description: it says what the field is for.
  for (const o of out) {
    if (o.hint === undefined && o.key === undefined) {
      const d = descriptionAt(schema, o.path);
      if (d) o.hint = (/^[A-Z][a-z]/.test(d) ? d[0]!.toLowerCase() + d.slice(1) : d).replace(/\.$/, "");
      else delete o.hint;
    }
  }
  return dropRequiredThatWereMisspelt(out);
}

/**
 * `entry:` written for `entries:` yields two issues: an unknown key and a missing one. The
 * unknown key's "did you mean" says it all; the "is required" line would only repeat it.
 */
function dropRequiredThatWereMisspelt(issues: PathIssue[]): PathIssue[] {
  const suggested = new Set(
    issues.flatMap((i) => {
      const m = i.key !== undefined && i.hint ? /^did you mean `(.+)`\?$/.exec(i.hint) : null;
      return m ? [JSON.stringify([...i.path, m[1]])] : [];
    }),
  );
  return issues.filter((i) => !(i.message.startsWith("is required") && suggested.has(JSON.stringify(i.path))));
}
