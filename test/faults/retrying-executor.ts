import { ModelCallError, Role, type GenerateRequestInit, type ModelPort } from "../../src/index.js";

/*
 * A small agent executor with a retry policy, the subject of the fault-plan proof (issue 15).
 * It runs test/faults/research.yaml's workflow: `plan` (streamed), then rounds of `next`
 * (unary: the model picks a tool), the tool run here, and `act` (streamed: the model reads the
 * tool's result), until `next` calls no tool; then `answer` (streamed).
 *
 * The retry policy, by status code only: UNAVAILABLE (14) and DEADLINE_EXCEEDED (4) are retried
 * up to 3 times, with a backoff of 100, 200, 400 ms that is declared (logged), not slept, so the
 * matrix runs at full speed on any machine; every other code gives up at once. So a stream broken
 * with UNAVAILABLE is retried (its partial text thrown away), and a dropped stream (an
 * RST_STREAM, which grpc-js and grpcio both report as INTERNAL) gives up. A retry sends the same
 * request again; a tool is never re-run by a retry, since only the model call is retried.
 *
 * test/interop/python/fault_matrix.py is the same executor in Python: same requests byte for byte.
 */

/**
 * Each call's deadline. A hang on the virtual clock ends at once by it (its budget, not its time),
 * so it can be far longer than any call takes: 2 s was crossed by plain calls on a loaded machine
 * (load 30 on 2 cores), which then ended DEADLINE_EXCEEDED and were retried, and the matrix
 * recorded a retry no plan asked for.
 */
export const callDeadlineMs = 600_000;
export const retriedCodes: ReadonlySet<number> = new Set([14, 4]);
export const maxRetries = 3;
export const backoffMs = (retry: number): number => 100 * 2 ** (retry - 1);

export const model = "research-model";
export const system = "You are a research agent. Use the tools, then answer.";
export const question = "How should a client retry a model call?";
export const answerPrompt = "Answer the question now.";

/** The tools offered in every request. */
export const tools = ["search", "fetch", "grep", "count"].map((name) => ({
  name,
  description: `The ${name} tool`,
  parametersJson: '{"type":"object"}',
}));

/** The tools' results: fixed texts, so every run (and every language) sends the same bytes. */
export const toolResults: Readonly<Record<string, string>> = {
  search: "https://docs.example/faults",
  fetch: "Retry on UNAVAILABLE.\nRetry on DEADLINE_EXCEEDED.\nGive up on INTERNAL.",
  grep: "Retry on UNAVAILABLE.\nRetry on DEADLINE_EXCEEDED.",
  count: "2",
};

/** One model call attempt: which logical call (step, its occurrence), which try, how it ended. */
export interface Attempt {
  step: string;
  occurrence: number;
  attempt: number;
  method: "generate" | "stream";
  /** 0 for OK, else the gRPC status code. */
  code: number;
  /** The backoff declared before the next attempt, when there is one. */
  backoffMs?: number;
}

export type Outcome = { ok: true; answer: string } | { ok: false; code: number; step: string; occurrence: number };

export interface ExecutorRun {
  outcome: Outcome;
  attempts: Attempt[];
  /** Each tool run, as `name arguments`. */
  toolRuns: string[];
}

type Message = NonNullable<GenerateRequestInit["messages"]>[number];
interface Reply {
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
}

class GaveUp extends Error {
  constructor(readonly outcome: Outcome & { ok: false }) {
    super(`gave up at ${outcome.step} #${outcome.occurrence}: code ${outcome.code}`);
  }
}

/** Runs the research workflow in `session` through `port`; never throws for a status. */
export async function runResearch(port: ModelPort, session: string): Promise<ExecutorRun> {
  const attempts: Attempt[] = [];
  const toolRuns: string[] = [];
  const occurrences = new Map<string, number>();
  const conversation: Message[] = [
    { role: Role.SYSTEM, content: system },
    { role: Role.USER, content: question },
  ];

  const once = async (step: string, method: Attempt["method"]): Promise<Reply> => {
    const request: GenerateRequestInit = { model, messages: conversation.map((m) => ({ ...m })), tools, stepId: step };
    const options = { session, timeoutMs: callDeadlineMs };
    if (method === "generate") {
      const r = await port.generate(request, options);
      return { content: r.message?.content ?? "", toolCalls: (r.message?.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) };
    }
    let content = "";
    for await (const frame of port.generateStream(request, options)) if (frame.frame.case === "textDelta") content += frame.frame.value;
    return { content, toolCalls: [] };
  };

  /** One logical model call, with the retry policy. */
  const call = async (step: string, method: Attempt["method"]): Promise<Reply> => {
    const occurrence = (occurrences.get(step) ?? 0) + 1;
    occurrences.set(step, occurrence);
    for (let attempt = 1; ; attempt++) {
      try {
        const reply = await once(step, method);
        attempts.push({ step, occurrence, attempt, method, code: 0 });
        return reply;
      } catch (err) {
        if (!(err instanceof ModelCallError)) throw err;
        const retry = retriedCodes.has(err.code) && attempt <= maxRetries;
        attempts.push({ step, occurrence, attempt, method, code: err.code, ...(retry ? { backoffMs: backoffMs(attempt) } : {}) });
        if (!retry) throw new GaveUp({ ok: false, code: err.code, step, occurrence });
        // The backoff is declared, not slept: the server's virtual clock has no use for real time.
      }
    }
  };

  try {
    const plan = await call("plan", "stream");
    conversation.push({ role: Role.ASSISTANT, content: plan.content });
    for (let round = 0; round < 8; round++) {
      const next = await call("next", "generate");
      conversation.push({ role: Role.ASSISTANT, content: next.content, toolCalls: next.toolCalls });
      const tool = next.toolCalls[0];
      if (tool === undefined) break;
      toolRuns.push(`${tool.name} ${tool.arguments}`);
      conversation.push({ role: Role.TOOL, content: toolResults[tool.name] ?? `no tool ${tool.name}`, toolCallId: tool.id });
      const act = await call("act", "stream");
      conversation.push({ role: Role.ASSISTANT, content: act.content });
    }
    conversation.push({ role: Role.USER, content: answerPrompt });
    const answer = await call("answer", "stream");
    return { outcome: { ok: true, answer: answer.content }, attempts, toolRuns };
  } catch (err) {
    if (err instanceof GaveUp) return { outcome: err.outcome, attempts, toolRuns };
    throw err;
  }
}
