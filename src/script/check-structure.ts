import { isAlias, isCollection, isPair, type Document, type Node as YamlNode } from "yaml";
import { maxAliasedChars, maxAliases, maxNestingDepth } from "./script-limits.js";

/*
 * Checks of a parsed YAML document that must come before anything walks it recursively
 * (visit, toJS, zod, the compiler): 5,000 nested brackets overflow the stack, an alias bomb
 * expands a few lines into billions of values, an alias inside its own anchor makes a cycle,
 * and an alias without an anchor makes toJS throw. Each walk here keeps its own stack.
 */

/** A problem with the document's shape, at an offset of its text. */
export interface StructureProblem {
  offset: number;
  message: string;
  hint: string;
}

const startOf = (node: YamlNode) => node.range?.[0] ?? 0;

/** Pushes the children of a collection or pair so that they pop in file order. */
function pushChildren<T>(stack: T[], node: unknown, wrap: (child: unknown) => T): void {
  if (isPair(node)) {
    stack.push(wrap(node.value), wrap(node.key));
  } else if (isCollection(node)) {
    for (let i = node.items.length - 1; i >= 0; i--) stack.push(wrap(node.items[i]));
  }
}

/** The problem of a list or mapping at `offset` nested deeper than maxNestingDepth. */
export function tooDeepAt(offset: number): StructureProblem {
  return {
    offset,
    message: `lists and mappings nest deeper than ${maxNestingDepth} levels here`,
    hint: "a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text)",
  };
}

/** The first list or mapping nested deeper than maxNestingDepth, in file order. */
export function findTooDeep(doc: Document): StructureProblem | undefined {
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isCollection(node)) {
      if (depth + 1 > maxNestingDepth) return tooDeepAt(startOf(node));
      pushChildren(stack, node, (child) => ({ node: child, depth: depth + 1 }));
    } else if (isPair(node)) {
      pushChildren(stack, node, (child) => ({ node: child, depth }));
    }
  }
  return undefined;
}

/**
 * Problems with the document's aliases (`*name`): more than maxAliases, one with no anchor
 * (`&name`) before it, one inside the value its anchor names, or all of them standing for more
 * than maxAliasedChars of script text together (counted the way they expand: an alias to a
 * value that holds aliases stands for those too), or one whose value, put in its place, nests
 * deeper than maxNestingDepth (a chain of aliases, each to a value 60 levels deep holding the
 * one before, expands to thousands of levels that toJS and zod would recurse through). Anchors resolve as the yaml library resolves
 * them: the last node with that anchor before the alias.
 */
export function checkAliases(doc: Document): StructureProblem[] {
  const problems: StructureProblem[] = [];
  const anchors = new Map<string, YamlNode>();
  // What the aliases inside an anchored value add when it is expanded.
  const added = new Map<YamlNode, number>();
  const open: YamlNode[] = [];
  // How many levels each closed collection holds, aliases expanded; and, per open one, its deepest child's.
  const heights = new Map<YamlNode, number>();
  const deepestChild: number[] = [];
  const childHeight = (h: number) => {
    if (deepestChild.length > 0) deepestChild[deepestChild.length - 1] = Math.max(deepestChild[deepestChild.length - 1]!, h);
  };
  let aliases = 0;
  let expanded = 0;
  const stack: { node: unknown; exit?: true }[] = [{ node: doc.contents }];
  while (stack.length > 0) {
    const { node, exit } = stack.pop()!;
    if (exit) {
      const height = 1 + deepestChild.pop()!;
      heights.set(open.pop()!, height);
      childHeight(height);
      continue;
    }
    if (isAlias(node)) {
      const name = node.source;
      if (++aliases > maxAliases) {
        problems.push({
          offset: startOf(node),
          message: `the script uses more than ${maxAliases} aliases (*name)`,
          hint: "write the values out, or share fewer of them",
        });
        return problems;
      }
      const target = anchors.get(name);
      if (!target) {
        problems.push({
          offset: startOf(node),
          message: `the alias *${name} has no anchor &${name} before it`,
          hint: `put &${name} before the value to repeat, above this alias (like \`latency: &${name} 250ms\`), or check the spelling`,
        });
        continue;
      }
      if (open.includes(target)) {
        problems.push({
          offset: startOf(node),
          message: `the alias *${name} is inside the value its anchor &${name} marks, so it would repeat itself forever`,
          hint: "an alias can repeat only a value that ends before it: move it out of that value",
        });
        continue;
      }
      const height = heights.get(target) ?? 0;
      if (open.length + height > maxNestingDepth) {
        // The first says it: the aliases after it in a chain only repeat it.
        problems.push({
          ...tooDeepAt(startOf(node)),
          message: `the alias *${name} stands for lists and mappings ${height} levels deep, here ${open.length} levels down: ${open.length + height} levels, deeper than ${maxNestingDepth}`,
        });
        return problems;
      }
      childHeight(height);
      const weight = (target.range ? target.range[1] - target.range[0] : 0) + (added.get(target) ?? 0);
      expanded += weight;
      for (const o of open) added.set(o, (added.get(o) ?? 0) + weight);
      if (expanded > maxAliasedChars) {
        problems.push({
          offset: startOf(node),
          message: `the aliases stand for more than ${maxAliasedChars} characters (${maxAliasedChars / 1024} KiB) of script together: an alias bomb?`,
          hint: "each alias repeats its anchor's value, aliases inside that value included: use fewer or smaller aliases, or write the values out",
        });
        return problems;
      }
      continue;
    }
    if (isPair(node)) {
      pushChildren(stack, node, (child) => ({ node: child }));
      continue;
    }
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, node as YamlNode);
    if (isCollection(node)) {
      open.push(node);
      deepestChild.push(0);
      stack.push({ node, exit: true });
      pushChildren(stack, node, (child) => ({ node: child }));
    }
  }
  return problems;
}

// The tags whose values are JSON's: a script is JSON's data model written as YAML.
const plainTags = new Set(["str", "int", "float", "bool", "null", "map", "seq"].map((t) => `tag:yaml.org,2002:${t}`));

/**
 * Values tagged to be something a script cannot hold: YAML 1.1's `!!binary` (bytes), `!!timestamp`
 * (a date), `!!set` and `!!omap`, and tags of the writer's own (`!thing`). toJS would build a
 * Uint8Array, a Date, a Set or a Map of them, which no check after this one expects.
 */
export function findForeignTags(doc: Document): StructureProblem[] {
  const problems: StructureProblem[] = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    const tag = (node as { tag?: string } | null)?.tag;
    if (tag && !plainTags.has(tag) && !isAlias(node)) {
      const shown = tag.startsWith("tag:yaml.org,2002:") ? `!!${tag.slice("tag:yaml.org,2002:".length)}` : tag;
      problems.push({
        offset: startOf(node as YamlNode),
        message: `the YAML tag \`${shown}\` makes a value a script cannot hold`,
        hint: "a script holds texts, numbers, true or false, null, lists and mappings: remove the tag (quote the value to keep it as a text)",
      });
      continue;
    }
    pushChildren(stack, node, (child) => child);
  }
  return problems;
}
