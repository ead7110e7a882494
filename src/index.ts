/**
 * modelstub as a library: start a scripted model server from test code, call it over gRPC or
 * in process, control its sessions and read their episodes. docs/library.md shows it in use.
 * The CLI (`modelstub serve`, ...) is the same engine behind the same options.
 * @packageDocumentation
 */
export { startServer, type StartServerOptions, type StubServer } from "./library/start-server.js";
export type { StubControl, SessionSummary, SessionReadOptions } from "./library/stub-control.js";
export { createGrpcPort } from "./library/create-grpc-port.js";
export { loadScript } from "./library/load-script.js";
export { loadScriptFile } from "./script/load-script.js";
export { validateScript, validateScriptFile, type ScriptValidation } from "./library/validate-script.js";
export {
  crashMatrix,
  crashMatrixSize,
  matrixPositions,
  type CrashMatrixOptions,
  type MatrixKind,
  type MatrixPlan,
  type MatrixPosition,
} from "./library/crash-matrix.js";
export { runMatrix, type RunMatrixOptions } from "./library/run-matrix.js";
export { junitXml, jsonLines } from "./matrix/write-reports.js";
export type { MatrixReport, PlanReport, ReportCall, ReportFault, ReportPosition, ReportReason, ReportRun, Verdict } from "./matrix/report-types.js";
export type { ExpectationsInput as MatrixExpectations } from "./matrix/expectations.js";
export type { ScriptObject, ScriptSource } from "./library/script-source.js";
export { loadFaultPlan, type FaultPlanObject, type FaultPlanSource } from "./library/fault-plan-source.js";
export { loadFaultPlanFile } from "./script/load-fault-plan.js";
export { ModelCallError, type GenerateRequestInit, type ModelPort, type PortCallOptions } from "./port/model-port.js";
export { collectStream } from "./port/collect-stream.js";
export { ScriptError, type ScriptIssue } from "./script/script-error.js";
export { Code, type CodeName } from "./shared/status-code.js";
export type { CompiledFaultPlan, CompiledScript } from "./script/compiled-script.js";
export type { Verification } from "./engine/verify-session.js";
export type { CallEvent, CallEventListener } from "./engine/call-event.js";
export * from "./library/proto.js";
