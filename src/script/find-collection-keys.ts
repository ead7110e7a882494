import { isCollection, visit, type Document, type Node as YamlNode } from "yaml";

/** A list or mapping used as a mapping key, with what to write instead. */
export interface CollectionKey {
  /** Offset of the node a person should look at. */
  offset: number;
  message: string;
  hint: string;
  /** Whether it is an unquoted `{{variable}}` (else some other list or mapping). */
  template: boolean;
}

const templateLike = /^\{\{[^{}]*\}\}$/;

/** The source of a node, without trailing spaces. */
const sourceOf = (text: string, node: YamlNode) => text.slice(node.range![0], node.range![1]).trimEnd();

/** Quotes a plain text the way YAML would take it as one text. */
const quote = (s: string) => (s.includes('"') ? `'${s.replace(/'/g, "''")}'` : `"${s}"`);

/**
 * Finds mapping keys that are lists or mappings. The script format has none, so each is a
 * slip, and almost always the same one: an unquoted `{{variable}}`, which YAML reads as a
 * mapping inside a mapping (`reply: {{last_user}}` is `reply: {{last_user: null}: null}`).
 * Left alone it would load as a nonsense value, or fail as an "unknown key `{ last_user }`",
 * and the yaml library would print a Node warning while turning the key into a text.
 */
export function findCollectionKeys(doc: Document, text: string): CollectionKey[] {
  const found: CollectionKey[] = [];
  const reported: [number, number][] = [];
  const within = (node: YamlNode) => reported.some(([a, b]) => a <= node.range![0] && node.range![1] <= b);
  const report = (node: YamlNode, template: boolean, message: string, hint: string) => {
    if (within(node)) return;
    reported.push([node.range![0], node.range![1]]);
    found.push({ offset: node.range![0], message, hint, template });
  };
  visit(doc, {
    Pair(_, pair, path) {
      if (!isCollection(pair.key) || !pair.key.range) return;
      // `{{x}}` is a mapping whose only key is the mapping `{x}`: the outer one is what was written.
      const holder = path[path.length - 1] as YamlNode | undefined;
      const written = holder?.range && templateLike.test(sourceOf(text, holder)) ? holder : pair.key;
      const source = sourceOf(text, written);
      if (!templateLike.test(source)) {
        report(
          pair.key,
          false,
          "a list or mapping is used as a key",
          "keys are texts: quote a key that holds { } [ ], or remove the `? ` that starts a complex key",
        );
        return;
      }
      // As a value in a block mapping the whole rest of the line is one text (`reply: {{last_user}}
      // said`); in a flow collection (`{ path: {{match.1}} }`) the variable ends at the next , or }.
      const outer = path.slice(0, -1).reverse().find(isCollection);
      let value = source;
      if (written === holder && outer && !outer.flow) {
        const end = text.indexOf("\n", written.range![0]);
        value = text
          .slice(written.range![0], end < 0 ? undefined : end)
          .replace(/\s+#.*$/, "")
          .trim();
      }
      report(written, true, "a {{variable}} must be quoted: unquoted, YAML reads it as a mapping", `write ${quote(value)}`);
    },
  });
  return found;
}
