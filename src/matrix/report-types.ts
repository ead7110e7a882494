/*
 * The report of `modelstub matrix run` (issue 30), as data: the JSON lines report writes one
 * PlanReport per line, and `MatrixReport` is the whole run, the input of the HTML report and of
 * the JUnit writer. Plain JSON values only (no bigint, no Date), so `JSON.parse` of a line gives
 * a PlanReport back. Field order is the order written.
 */

/** Whether a plan passed. `error` means the runner could not run it (the server refused the plan, COMMAND could not start). */
export type Verdict = "pass" | "fail" | "error";

/** A call position of the clean run: the `occurrence`-th call with step id `step` ("" is the main list). */
export interface ReportPosition {
  step: string;
  occurrence: number;
  /** The call's sequence in the clean run's episode, when positions came from one. */
  call?: number;
}

/** One fault of a plan: where, and which kind (`unavailable`, `timeout`, ..., `crash`, or `chaos`). */
export interface ReportFault {
  kind: string;
  /** Unset for chaos plans. */
  position?: ReportPosition;
}

/** Why a plan failed: a stable code to branch on and a sentence to read. */
export interface ReportReason {
  /**
   * `exit-code` (COMMAND's exit code broke the expectation), `final-reply` (the last reply differs
   * from the clean run's), `not-struck` (a planned rule never struck), `nondeterministic` (--repeat
   * episodes differ), `golden` (differs from the golden episode), `side-effect-twice` (a tool
   * call's result was sent twice after a restart), `check-hook` (the --check-hook failed),
   * `crash-not-reached` (the crash point never arrived), `timeout` (COMMAND ran past --timeout),
   * `runner` (the runner could not run the plan).
   */
  code: string;
  message: string;
  /** A diff to show (JUnit failure body, HTML): the first differing field, or hook output. */
  detail?: string;
}

/** One call of a run's episode, as the HTML timeline draws it. */
export interface ReportCall {
  sequence: number;
  step: string;
  /** `generate` or `stream`. */
  method: string;
  /** `OUTCOME_OK`, `OUTCOME_ERROR`, ... as in the episode's JSON. */
  outcome: string;
  /** The status code name when not OK (`UNAVAILABLE`). */
  status?: string;
  /** The script entry that answered (`steps.plan[0]`); empty for a faulted call. */
  entry: string;
  /** Declared (virtual or scripted) start and end, ms from the episode's start. */
  startMs: number;
  endMs: number;
  /** The fault the plan put on the call: its rule (`rules[0]`, `chaos`) and kind (`FAULT_KIND_ERROR`). */
  fault?: { rule: string; kind: string };
  /** Which start of COMMAND made the call: 0 the first, 1.. after each crash. */
  restart: number;
}

/** One run of COMMAND for a plan (there are several with restarts). */
export interface ReportRun {
  /** MODELSTUB_RESTART of this run. */
  restart: number;
  /** The exit code, or null when killed by a signal. */
  exitCode: number | null;
  /** `SIGKILL` when the runner killed it at the crash point. */
  signal?: string;
}

/** One plan's result: one JSON line of --jsonl, one test case of --junit. */
export interface PlanReport {
  /** The plan's stable id (also its name in the episode). */
  id: string;
  /** The plan in words. */
  name: string;
  /** `single`, `pair`, `crash`, `chaos` or `clean`. */
  kind: string;
  faults: ReportFault[];
  verdict: Verdict;
  /** Every start of COMMAND for the first repetition, in order. */
  runs: ReportRun[];
  /** Exit codes of the last run of each repetition (null: killed by a signal). */
  exitCodes: (number | null)[];
  /** How many times COMMAND was restarted after a crash (first repetition). */
  restarts: number;
  /** Empty when the plan passed. */
  reasons: ReportReason[];
  /** The episode of the first repetition, written by the runner (`.json`, as `modelstub episode` prints it), when --out-dir gives a place. */
  episodePath?: string;
  /** The episode's calls (first repetition), for the timeline. */
  calls: ReportCall[];
  /** Wall time of the plan's runs, ms (not deterministic: for reading only). */
  durationMs: number;
  /** The session the first repetition ran in. */
  session: string;
}

/** A whole `matrix run`: what ran, against what, and every plan's result. */
export interface MatrixReport {
  /** The script's name and file. */
  script: { name: string; file?: string };
  /** COMMAND and its arguments. */
  command: string[];
  /** The clean run (no faults), which the other plans compare their final reply with. */
  clean?: PlanReport;
  plans: PlanReport[];
  summary: { plans: number; passed: number; failed: number; errors: number; durationMs: number };
  /** The kinds and positions of the grid: kinds as given, positions in clean-run order. */
  grid: { kinds: string[]; positions: ReportPosition[] };
}
