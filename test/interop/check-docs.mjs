// docs/clients.md against the projects in examples/clients/ (the interop suite's snippets.sh uses
// it; see test/interop/README.md). Three modes:
//
//   node test/interop/check-docs.mjs              checks the page; prints ok/FAIL lines, exits 1
//                                                 on a failure
//   node test/interop/check-docs.mjs --extract DIR
//                                                 writes the page's commands for the suite to run:
//                                                 DIR/server.sh, DIR/<project>.sh and the output
//                                                 each project must print, DIR/<project>.out
//   node test/interop/check-docs.mjs --files PROJECT
//                                                 the files of examples/clients/PROJECT, one a line
//
// The checks: every `<!-- snippet: PATH -->` line stands right before a fenced block whose text
// is the file PATH; every file of every project is shown that way, except its lockfile, which
// the page names; every block the page marks INTEROP (below) is a snippet or a command block the
// suite runs; every sh/go/python/rust/ts block carries a marker (INTEROP, another `not run:`
// reason, or `run` for test/docs/run-doc-blocks.mjs).
//
// Which commands the suite runs: in each `## ` section of the page, the ```sh blocks marked
// INTEROP, in order. The section whose snippets are examples/clients/P/... holds P's commands;
// the one section with INTEROP sh blocks and no snippets holds the server's. A section's
// `<!-- output: examples/clients/P -->` text block is what P's commands must print last.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const PAGE = "docs/clients.md";
export const INTEROP = "<!-- not run: built and run by the interop suite (test/interop/snippets.sh) -->";
export const PROJECTS = ["go", "python", "rust", "typescript"];
/** Lockfiles: in the project folder, named on the page, not shown (they are generated). */
const LOCKFILES = { go: "go.sum", python: null, rust: "Cargo.lock", typescript: "package-lock.json" };
/** What building and running a project writes into it (never part of the project). */
const OUTPUTS = new Set(["proto", "gen", "dist", "node_modules", "target", ".venv", "modelstub", "__pycache__"]);
const PASTED = new Set([
  "sh",
  "bash",
  "shell",
  "zsh",
  "console",
  "ts",
  "typescript",
  "tsx",
  "js",
  "javascript",
  "mjs",
  "cjs",
  "python",
  "py",
  "go",
  "rust",
  "rs",
]);

/** The files of examples/clients/PROJECT, relative to it, sorted. */
export function projectFiles(project) {
  const base = `${root}examples/clients/${project}`;
  const out = [];
  const walk = (rel) => {
    for (const name of readdirSync(`${base}/${rel}`).sort()) {
      if (OUTPUTS.has(name)) continue;
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(`${base}/${r}`).isDirectory()) walk(r);
      else out.push(r);
    }
  };
  walk("");
  return out;
}

/** The page's fenced blocks: {line, lang, text, markers (the comment lines right above), section}. */
function parse(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    if (/^## /.test(lines[i])) section = lines[i].slice(3).trim();
    const open = /^(`{3,})\s*([^`\s]*)/.exec(lines[i]);
    if (!open) continue;
    const body = [];
    let j = i + 1;
    while (j < lines.length && !lines[j].startsWith(open[1])) body.push(lines[j++]);
    const markers = [];
    for (let k = i - 1; k >= 0 && /^<!--.*-->$/.test(lines[k].trim()); k--) markers.unshift(lines[k].trim());
    blocks.push({ line: i + 1, lang: open[2].toLowerCase(), text: `${body.join("\n")}\n`, markers, section });
    i = j;
  }
  return blocks;
}
const snippetOf = (b) => /^<!-- snippet: (\S+) -->$/.exec(b.markers.at(-1) ?? "")?.[1];
const outputOf = (b) => b.markers.map((m) => /^<!-- output: examples\/clients\/(\S+) -->$/.exec(m)?.[1]).find(Boolean);

/** The commands the suite runs: {server, projects: {P: {commands, output}}}, and the problems found. */
function commands(blocks) {
  const problems = [];
  const sections = new Map();
  for (const b of blocks) {
    if (!sections.has(b.section)) sections.set(b.section, { project: new Set(), sh: [], output: [] });
    const s = sections.get(b.section);
    const path = snippetOf(b);
    const m = path && /^examples\/clients\/([^/]+)\//.exec(path);
    if (m) s.project.add(m[1]);
    if (b.markers.includes(INTEROP) && !path) {
      if (b.lang === "sh") s.sh.push(b);
      else problems.push(`${PAGE}:${b.line}: a \`${b.lang}\` block marked as run by the interop suite is neither a snippet nor a sh block, so nothing runs it`);
    }
    const o = outputOf(b);
    if (o) s.output.push({ project: o, b });
  }
  const result = { server: null, projects: {} };
  for (const [name, s] of sections) {
    if (s.project.size > 1) problems.push(`section "${name}" shows files of several projects: ${[...s.project].join(", ")}`);
    const project = [...s.project][0];
    const text = s.sh.map((b) => b.text).join("");
    if (!project) {
      if (s.sh.length === 0) continue;
      if (result.server !== null) problems.push(`section "${name}": a second section of interop commands without a project (the server's are in another)`);
      result.server = text;
    } else {
      if (s.sh.length === 0) problems.push(`section "${name}" (examples/clients/${project}) has no sh block marked ${INTEROP}`);
      const outs = s.output.filter((o) => o.project === project);
      if (outs.length !== 1) problems.push(`section "${name}" needs exactly one "<!-- output: examples/clients/${project} -->" block (found ${outs.length})`);
      result.projects[project] = { commands: text, output: outs[0]?.b.text ?? "" };
    }
    for (const o of s.output) if (o.project !== project) problems.push(`section "${name}": output block for ${o.project} outside its project's section`);
  }
  if (result.server === null) problems.push(`no section with the server's command (sh blocks marked ${INTEROP} and no snippets)`);
  for (const p of PROJECTS) if (!result.projects[p]) problems.push(`no section shows examples/clients/${p}`);
  return { result, problems };
}

const page = readFileSync(`${root}${PAGE}`, "utf8");
const blocks = parse(page);
const args = process.argv.slice(2);

if (args[0] === "--files") {
  for (const f of projectFiles(args[1])) console.log(f);
} else if (args[0] === "--extract") {
  const { result, problems } = commands(blocks);
  if (problems.length) {
    for (const p of problems) console.error(`check-docs: ${p}`);
    process.exit(1);
  }
  mkdirSync(args[1], { recursive: true });
  writeFileSync(`${args[1]}/server.sh`, result.server);
  for (const [p, { commands: c, output }] of Object.entries(result.projects)) {
    writeFileSync(`${args[1]}/${p}.sh`, c);
    writeFileSync(`${args[1]}/${p}.out`, output);
  }
} else {
  let failed = 0;
  const ok = (m) => console.log(`ok   docs: ${m}`);
  const fail = (m) => {
    failed++;
    console.log(`FAIL docs: ${m}`);
  };
  const shown = new Map();
  for (const b of blocks) {
    const path = snippetOf(b);
    if (path) shown.set(path, b);
  }
  const expected = new Set();
  for (const p of PROJECTS) {
    for (const f of projectFiles(p)) {
      if (f === LOCKFILES[p]) continue;
      expected.add(`examples/clients/${p}/${f}`);
    }
    const lock = LOCKFILES[p];
    if (lock) {
      let present = true;
      try {
        statSync(`${root}examples/clients/${p}/${lock}`);
      } catch {
        present = false;
      }
      if (!present) fail(`examples/clients/${p}/${lock} is missing (the commands on the page need it)`);
      else if (!page.includes(`\`${lock}\``)) fail(`${PAGE} does not name examples/clients/${p}'s lockfile \`${lock}\``);
      else ok(`examples/clients/${p}/${lock} is there and named on the page`);
    }
  }
  for (const path of expected) {
    const b = shown.get(path);
    if (!b) {
      fail(`${path} is not shown on ${PAGE} (a "<!-- snippet: ${path} -->" line right before a fenced block)`);
      continue;
    }
    const file = readFileSync(`${root}${path}`, "utf8");
    if (b.text.trimEnd() !== file.trimEnd()) {
      const a = b.text.split("\n"),
        f = file.split("\n");
      const i = a.findIndex((line, n) => line !== f[n]);
      fail(`the block for ${path} (${PAGE}:${b.line}) differs from the file at line ${i + 1}:\n     page: ${a[i]}\n     file: ${f[i]}`);
    } else if (!b.markers.includes(INTEROP)) {
      fail(`${PAGE}:${b.line}: the block for ${path} lacks the line ${INTEROP}`);
    } else {
      ok(`the block for ${path} is the file`);
    }
  }
  for (const path of shown.keys()) {
    if (!expected.has(path)) fail(`${PAGE} shows ${path}, which is no file of examples/clients/{${PROJECTS.join(",")}} (or is a lockfile)`);
  }
  const unmarked = blocks.filter((b) => PASTED.has(b.lang) && !b.markers.some((m) => /^<!-- (run|not run:)/.test(m)));
  if (unmarked.length) for (const b of unmarked) fail(`${PAGE}:${b.line}: a \`${b.lang}\` block with no run/not run marker`);
  else ok(`every sh/go/python/rust/ts block of ${PAGE} carries a run or not-run marker`);
  const { problems } = commands(blocks);
  if (problems.length) for (const p of problems) fail(p);
  else ok(`${PAGE} has the server's command and each project's commands and output, for snippets.sh to run`);
  process.exitCode = failed ? 1 : 0;
}
