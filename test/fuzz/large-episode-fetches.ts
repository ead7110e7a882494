import { userRequest } from "../support/requests.js";
import type { Attack } from "./attacks.js";
import type { IsolationServer } from "./bystander.js";
import { codeName } from "./harness.js";

/* The large-episode attack of the isolation check (bystander.test.ts; the others are in attacks.ts). */

/** One GetEpisode of session "attacker": its code and details. */
async function fetchEpisode(server: IsolationServer, bytesOnly: boolean): Promise<{ code: number; details: string; ms: number }> {
  const started = performance.now();
  return server.control.call("GetEpisode", { session: "attacker", bytesOnly }, { timeoutMs: 60_000 }).then(
    () => ({ code: 0, details: "", ms: performance.now() - started }),
    (err: { code?: number; details?: string; message?: string }) => ({
      code: err.code ?? -1,
      details: err.details ?? err.message ?? "",
      ms: performance.now() - started,
    }),
  );
}

/**
 * Records an episode of about 60 MiB in session "attacker" (20 calls of 3 MB requests), fetching
 * it with GetEpisode half way, at 30 MiB, and at the end; then ExportEpisode, `times` times, which
 * must deliver every byte. GetEpisode answers at most 32 MiB (getEpisodeMaxBytes): at 30 MiB the
 * server copies the bytes_only answer into its frame (a client at its 4 MiB default refuses it,
 * RESOURCE_EXHAUSTED "larger than max", once the server has done that work), and refuses the full
 * answer (60 MiB) itself, RESOURCE_EXHAUSTED naming ExportEpisode; at 60 MiB it refuses both.
 */
export function largeEpisodeFetches(times: number): Attack {
  return async (server) => {
    const notes: string[] = [];
    const failures: string[] = [];
    const text = "x".repeat(3_000_000);
    const check = async (bytesOnly: boolean, served: boolean, at: string) => {
      const { code, details, ms } = await fetchEpisode(server, bytesOnly);
      const what = `GetEpisode${bytesOnly ? " bytes_only" : ""} at ${at}`;
      const byServer = /ExportEpisode/.test(details);
      notes.push(`${what}: ${codeName(code)} ${code === 0 ? "" : byServer ? "(by the server) " : "(by the client) "}in ${ms.toFixed(0)} ms`);
      if (codeName(code) !== "RESOURCE_EXHAUSTED" || byServer === served)
        failures.push(
          `${what}: expected ${served ? "an answer the client refuses" : "the server's refusal naming ExportEpisode"}, got ${codeName(code)} ${details.slice(0, 200)}`,
        );
    };
    const started = performance.now();
    for (let i = 0; i < 20 && server.exited() === undefined; i++) {
      await server.good
        .generate(userRequest(`${text} ${i}`), { session: "attacker", timeoutMs: 60_000 })
        .catch((err: Error) => failures.push(`recording call ${i}: ${err.message}`));
      if (i === 9) {
        await check(true, true, "30 MiB");
        await check(false, false, "30 MiB");
      }
    }
    notes.push(`20 calls of 3 MB recorded in ${(performance.now() - started).toFixed(0)} ms`);
    await check(true, false, "60 MiB");
    await check(false, false, "60 MiB");
    for (let i = 0; i < times && server.exited() === undefined; i++) {
      const exportStarted = performance.now();
      try {
        const e = await server.control.exportEpisode("attacker", { timeoutMs: 60_000 });
        notes.push(`ExportEpisode: ${e.bytes.length} bytes, ${e.calls} calls in ${(performance.now() - exportStarted).toFixed(0)} ms`);
        if (e.calls !== 20 || e.bytes.length < 60_000_000) failures.push(`ExportEpisode gave ${e.bytes.length} bytes and ${e.calls} calls`);
      } catch (err) {
        failures.push(`ExportEpisode: ${(err as Error).message}`);
      }
    }
    return { notes, failures };
  };
}
