import type { ListInput, ScriptInput } from "./script-schema.js";
import { stepIdPattern } from "../shared/step-id.js";
import type { Chunking, CompiledEntry, CompiledList, CompiledScript, DeclaredModel, OnExhausted } from "./compiled-script.js";
import { compileChunking, compileLatency } from "./compile-latency.js";
import { compileEntry } from "./compile-entry.js";
import type { Report } from "./report.js";
import { compileFaultPlanInSteps } from "./compile-fault-plan.js";
import { checkPlanSteps } from "./check-plan-steps.js";
import { compileEmbeddings } from "./compile-embeddings.js";

function* compileList(
  list: ListInput,
  path: (string | number)[],
  key: string,
  label: string,
  defaults: { latency: { first: number; per: number }; chunking: Chunking; onExhausted: OnExhausted },
  report: Report,
): Generator<void, CompiledList> {
  const entries = Array.isArray(list) ? list : list.entries;
  const entriesPath = Array.isArray(list) ? path : [...path, "entries"];
  const onExhausted = (Array.isArray(list) ? undefined : list.on_exhausted) ?? defaults.onExhausted;
  const compiled: CompiledEntry[] = [];
  for (let i = 0; i < entries.length; i++) {
    const c = compileEntry(entries[i]!, [...entriesPath, i], `${label}[${i}]`, defaults, report);
    if (c) compiled.push(c);
    yield;
  }
  if (entries.length === 0) report(entriesPath, "the list has no entries: expected at least one", "add an entry like `- reply: ...`, or remove the list");
  return { key, label, onExhausted, entries: compiled };
}

/** Compiles a validated script; semantic problems go to `report` at their paths. */
export function compileScript(input: ScriptInput, source: string, report: Report): CompiledScript {
  const steps = compileScriptInSteps(input, source, report);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * compileScript, pausing after each entry: the serving thread compiles a script the worker
 * checked a few entries at a time, so that 1,500 regexes (about 100 ms) never hold its loop at once.
 */
export function* compileScriptInSteps(input: ScriptInput, source: string, report: Report): Generator<void, CompiledScript> {
  if (input.entries === undefined && input.steps === undefined && input.embeddings === undefined) {
    report(
      [],
      "the script has neither entries nor steps: expected at least one of them",
      "add `entries:` with a list of replies, or `steps:` with a list per step id",
    );
  }
  const d = input.defaults ?? {};
  const defaults = {
    latency: compileLatency(d.latency, { first: 0, per: 0 }, ["defaults", "latency"], report),
    chunking: compileChunking(d.chunking, { kind: "words" }),
    onExhausted: (d.on_exhausted ?? "fail") as OnExhausted,
  };
  const lists = new Map<string, CompiledList>();
  if (input.entries !== undefined) lists.set("", yield* compileList(input.entries, ["entries"], "", "entries", defaults, report));
  for (const [step, list] of Object.entries(input.steps ?? {})) {
    if (!stepIdPattern.test(step)) {
      report(
        ["steps"],
        `step id ${JSON.stringify(step)} ${step.length > 128 ? "is longer than 128 characters" : "has characters outside A-Z a-z 0-9 . _ : / -"}`,
        `step ids travel in gRPC metadata: use plain ones like ${JSON.stringify(step.replace(/[^A-Za-z0-9._:/-]+/g, "-").slice(0, 128) || "plan")}`,
        { key: step },
      );
    }
    lists.set(step, yield* compileList(list, ["steps", step], step, `steps.${step}`, defaults, report));
  }
  const models: DeclaredModel[] = (input.models ?? []).map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    ownedBy: m.owned_by ?? "modelstub",
    contextLength: m.context_length ?? 0,
    inputModalities: m.input_modalities ?? ["text"],
    outputModalities: m.output_modalities ?? ["text"],
    promptPrice: m.prompt_price ?? "0",
    completionPrice: m.completion_price ?? "0",
  }));
  const seen = new Map<string, number>();
  (input.models ?? []).forEach((m, i) => {
    const first = seen.get(m.id);
    if (first !== undefined)
      report(
        ["models", i, "id"],
        `model ${JSON.stringify(m.id)} is declared twice: expected unique ids`,
        `models[${first}] declares it first; rename or remove one`,
      );
    else seen.set(m.id, i);
  });
  let entryCount = 0;
  for (const l of lists.values()) entryCount += l.entries.length;
  const script: CompiledScript = {
    name: input.name ?? source,
    source,
    models,
    defaultModel: d.model ?? models[0]?.id ?? "modelstub",
    lists,
    entryCount,
  };
  if (input.replay?.mode !== undefined) script.replayMode = input.replay.mode;
  if (input.embeddings !== undefined) script.embeddings = compileEmbeddings(input.embeddings, report);
  if (input.faults !== undefined) {
    script.faults = yield* compileFaultPlanInSteps(input.faults, ["faults"], script.name, report);
    for (const p of checkPlanSteps(script.faults, script)) report(["faults", ...p.path], p.message, p.hint);
  }
  return script;
}
