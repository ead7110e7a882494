import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { srcDir } from "./module-graph.js";

/** src/index.ts: the package's public surface. */
export const indexFile = join(srcDir, "index.ts");

/** Where a name exported by a module was declared (its file and local name), and whether a type-only import or export lies on the way. */
export interface Origin {
  binding: string;
  typeOnly: boolean;
}

const parsed = new Map<string, ts.SourceFile>();
function parse(file: string): ts.SourceFile {
  let sf = parsed.get(file);
  if (!sf) parsed.set(file, (sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)));
  return sf;
}

/** The file a module specifier of `from` names: a relative `./x.js` is `./x.ts`; a package stays its name. */
export function moduleFile(from: string, spec: string): string {
  if (!spec.startsWith(".")) return `package:${spec}`;
  const path = resolve(dirname(from), spec);
  const source = path.replace(/\.js$/, ".ts");
  return existsSync(source) ? source : path;
}

const specOf = (node: ts.Node): string => ((node as { moduleSpecifier?: ts.Expression }).moduleSpecifier as ts.StringLiteral).text;
const hasExport = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const hasDefault = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);

/** The names a declaration statement declares (a variable statement may declare several). */
function declared(node: ts.Statement): string[] {
  if (ts.isVariableStatement(node)) return node.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
  const name = (node as { name?: ts.Node }).name;
  return name && ts.isIdentifier(name) ? [name.text] : [];
}

/** Where a local name of `file` comes from: an import of it, or its own declaration. */
function local(file: string, name: string, typeOnly: boolean): Origin | undefined {
  for (const st of parse(file).statements) {
    if (!ts.isImportDeclaration(st) || !st.importClause) continue;
    const clause = st.importClause;
    const from = moduleFile(file, specOf(st));
    if (clause.name?.text === name) return follow(from, "default", typeOnly || clause.isTypeOnly);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings) && bindings.name.text === name)
      return { binding: `namespace:${from}`, typeOnly: typeOnly || clause.isTypeOnly };
    if (bindings && ts.isNamedImports(bindings)) {
      for (const el of bindings.elements) {
        if (el.name.text === name) return follow(from, (el.propertyName ?? el.name).text, typeOnly || clause.isTypeOnly || el.isTypeOnly);
      }
    }
  }
  return { binding: `${file}#${name}`, typeOnly };
}

/** Follows what `name` exported by `file` is through its re-exports; undefined when the file does not export it. */
function follow(file: string, name: string, typeOnly: boolean, seen = new Set<string>()): Origin | undefined {
  if (file.startsWith("package:") || !file.endsWith(".ts")) return { binding: `${file}#${name}`, typeOnly };
  if (seen.has(`${file}#${name}`)) return undefined;
  seen.add(`${file}#${name}`);
  const stars: ts.ExportDeclaration[] = [];
  for (const st of parse(file).statements) {
    if (ts.isExportDeclaration(st)) {
      const only = typeOnly || st.isTypeOnly;
      if (!st.exportClause) stars.push(st);
      else if (ts.isNamespaceExport(st.exportClause)) {
        if (st.exportClause.name.text === name) return { binding: `namespace:${moduleFile(file, specOf(st))}`, typeOnly: only };
      } else {
        for (const el of st.exportClause.elements) {
          if (el.name.text !== name) continue;
          const source = (el.propertyName ?? el.name).text;
          const elOnly = only || el.isTypeOnly;
          return st.moduleSpecifier ? follow(moduleFile(file, specOf(st)), source, elOnly, seen) : local(file, source, elOnly);
        }
      }
    } else if (ts.isExportAssignment(st)) {
      if (name === "default") return { binding: `${file}#default`, typeOnly };
    } else if (hasExport(st)) {
      if (hasDefault(st) ? name === "default" : declared(st).includes(name)) return { binding: `${file}#${name}`, typeOnly };
    }
  }
  // `export * from` passes on every name but default; the first star that has the name wins
  // (TypeScript drops a name two stars both export: the index has none such).
  if (name === "default") return undefined;
  for (const st of stars) {
    const found = follow(moduleFile(file, specOf(st)), name, typeOnly || st.isTypeOnly, seen);
    if (found) return found;
  }
  return undefined;
}

/** Where `name`, as `file` exports it, was declared: undefined when `file` does not export `name`. */
export function originOf(file: string, name: string): Origin | undefined {
  return follow(file, name, false);
}

/** One name an import statement brings in: the module's name for it, and whether the import is of its type only. */
export interface ImportedName {
  name: string;
  typeOnly: boolean;
}

/** One `import ... from` (or `export ... from`) statement of a file, with the module it resolves to. */
export interface ImportStatement {
  file: string;
  module: string;
  spec: string;
  line: number;
  /** The names it brings in; undefined for a namespace import (`* as x`) or `export *`, which bring in the whole module. */
  names: ImportedName[] | undefined;
}

/** The import statements of a file that name a module by a string, in order. */
export function importStatements(file: string): ImportStatement[] {
  const sf = parse(file);
  const out: ImportStatement[] = [];
  for (const st of sf.statements) {
    if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier) continue;
    const spec = specOf(st);
    const line = sf.getLineAndCharacterOfPosition(st.getStart(sf)).line + 1;
    let names: ImportedName[] | undefined = [];
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause?.name) names.push({ name: "default", typeOnly: clause.isTypeOnly });
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names = undefined;
      else if (bindings)
        names.push(...bindings.elements.map((el) => ({ name: (el.propertyName ?? el.name).text, typeOnly: clause!.isTypeOnly || el.isTypeOnly })));
    } else if (!st.exportClause || ts.isNamespaceExport(st.exportClause)) names = undefined;
    else names = st.exportClause.elements.map((el) => ({ name: (el.propertyName ?? el.name).text, typeOnly: st.isTypeOnly || el.isTypeOnly }));
    out.push({ file, module: moduleFile(file, spec), spec, line, names });
  }
  return out;
}

/** Whether a module is internal to src/: under src/ and not the index. */
export const isInternal = (module: string) => module.startsWith(srcDir) && module !== indexFile;

/**
 * Whether the index exports `name` of `module` as the same binding, and usably: a value import
 * needs the index to export a value, not `export type` of it.
 */
export function publicAsIs(module: string, imported: ImportedName): boolean {
  const there = originOf(module, imported.name);
  const here = originOf(indexFile, imported.name);
  return there !== undefined && here !== undefined && there.binding === here.binding && (imported.typeOnly || !here.typeOnly);
}

/** The names of an internal import the index does not export as the same binding (all of them for a namespace import). */
export function unexported(imp: ImportStatement): string[] {
  if (!imp.names) return ["*"];
  return imp.names.filter((n) => !publicAsIs(imp.module, n)).map((n) => n.name);
}
