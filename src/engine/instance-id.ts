import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

const instancePattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Checks an instance id (--instance): plain, like a session name, so `/` can separate the parts
 * of an episode id and the id fits in a header unchanged. Returns what is wrong, or undefined.
 */
export function instanceIdProblem(id: string): string | undefined {
  return instancePattern.test(id) ? undefined : `invalid instance id ${JSON.stringify(id.slice(0, 140))}: use 1 to 128 of A-Z a-z 0-9 . _ -`;
}

/**
 * The instance id when none is set: host name and process id, so two servers on one host differ
 * and a container's (its host name is the container's or pod's name) says where it runs.
 */
export function defaultInstanceId(host = hostname(), pid = process.pid): string {
  const plain = host.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100) || "modelstub";
  return `${plain}-${pid}`;
}

/**
 * Mints episode ids, `<instance>/<session>/<boot>.<n>`: `boot` is random per stub (per process
 * for `serve`), so a restarted instance that keeps its id (a pod name) still never repeats an
 * episode id; `n` counts the stub's episodes, every session's together, so a session deleted or
 * evicted and opened again gets a new one. Operational only: no episode's bytes ever hold it.
 */
export function episodeIdMinter(instance: string): (session: string) => string {
  const boot = randomBytes(4).toString("hex");
  let n = 0;
  return (session) => `${instance}/${session}/${boot}.${++n}`;
}
