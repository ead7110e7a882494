import type { Logger } from "../log/create-logger.js";
import { parseHttpAddress } from "../http/start-http-server.js";
import { prepareRecordDir, RecordDirError } from "../episode-files/prepare-record-dir.js";
import { errorText } from "../shared/status-error.js";

/** A refusal that ends `modelstub serve` with its message and exit code 2. */
export class ServeError extends Error {}

/**
 * Why a front could not listen, as `serve` and `record` both say it: a busy address (Node's
 * EADDRINUSE, grpc-js's "No address added") names the flag that picks another.
 */
export function listenProblem(address: string, flag: "grpc" | "http", err: unknown): string {
  const msg = errorText(err);
  if (!/EADDRINUSE|address already in use|No address added/i.test(msg)) return `cannot listen on ${address}: ${msg}`;
  return `cannot listen on ${address}: the address is in use (${flag === "grpc" ? "is another modelstub running? " : ""}pick another with --${flag})`;
}

/** The host of --http, or the same refusal a bad address got from listening on it. */
export function httpHostOf(address: string): string {
  try {
    return parseHttpAddress(address).host;
  } catch (err) {
    throw new ServeError(`cannot listen on ${address}: ${(err as Error).message}`);
  }
}

/**
 * Checks --record-dir before anything listens (prepareRecordDir): a directory that cannot be
 * written refuses the start, rather than every episode being lost at shutdown. Logs the stale
 * temp files it removed.
 */
export async function checkRecordDir(dir: string, logger: Logger): Promise<void> {
  try {
    const { removed, kept } = await prepareRecordDir(dir);
    if (removed > 0 || kept > 0) logger.info("stale temp files in --record-dir", { dir, removed, kept_for_running_process: kept });
  } catch (err) {
    if (err instanceof RecordDirError) throw new ServeError(err.message);
    throw err;
  }
}
