import { isMap, isPair, isScalar, isSeq, type Document, type Node as YamlNode } from "yaml";

const keyOf = (p: unknown): string | undefined => (isPair(p) && isScalar(p.key) ? String(p.key.value) : undefined);

/** Finds the YAML node for a path: the deepest existing node on the way, or a key when asked. */
export function locate(doc: Document, path: readonly (string | number)[], key?: string): YamlNode | undefined {
  let node: unknown = doc.contents;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => keyOf(p) === String(seg));
      if (!pair) return node as YamlNode;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof seg === "number" && node.items[seg]) {
      node = node.items[seg];
    } else break;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => keyOf(p) === key);
    if (pair && isScalar(pair.key)) return pair.key as YamlNode;
  }
  return (node ?? undefined) as YamlNode | undefined;
}

/** The field path of the node that holds `offset`, for syntax errors inside a mostly parsed file. */
export function pathAt(doc: Document, offset: number): (string | number)[] {
  const path: (string | number)[] = [];
  const inside = (n: unknown) => {
    const r = (n as YamlNode | null)?.range;
    return !!r && r[0] <= offset && offset < r[2];
  };
  let node: unknown = doc.contents;
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => inside(p.key) || inside(p.value));
      const k = pair && keyOf(pair);
      // On a key, the path stops at its mapping: a broken line is often parsed as a key.
      if (!pair || k === undefined || inside(pair.key)) return path;
      path.push(k);
      node = pair.value;
    } else if (isSeq(node)) {
      const i = node.items.findIndex(inside);
      if (i < 0) return path;
      path.push(i);
      node = node.items[i];
    } else return path;
  }
}

/** Offset of `needle` inside the node's own source text, so a message can point into a long text. */
export function offsetOf(text: string, node: YamlNode | undefined, needle: string | undefined): number | undefined {
  const start = node?.range?.[0];
  if (start === undefined) return undefined;
  if (needle === undefined) return start;
  const at = text.slice(start, node!.range![1]).indexOf(needle);
  return at >= 0 ? start + at : start;
}
