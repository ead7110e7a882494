import { createVirtualClock, createRealClock } from "../engine/clock.js";
import type { CompiledScript } from "../engine/compile-script.js";
import { createStub } from "../engine/create-stub.js";
import { defaultScript } from "../engine/default-script.js";
import { loadScriptFile } from "../engine/load-script.js";
import { ScriptError } from "../engine/script-error.js";
import { startGrpcServer } from "../grpc/start-grpc-server.js";
import { startHttpServer, type RunningHttpServer } from "../http/start-http-server.js";
import { writeEpisodeFile } from "../record/write-episode-file.js";
import { formatOptionsHelp, intOption, resolveOptions, UsageError } from "./options.js";
import { serveOptions } from "./serve-options.js";

const usage = `usage: modelstub serve [options]

Serves a script as modelstub.v1.ModelService and ControlService over gRPC.

${formatOptionsHelp(serveOptions)}
`;

/** `modelstub serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0. */
export async function serve(argv: string[]): Promise<number> {
  let options;
  try {
    ({ options } = resolveOptions(serveOptions, argv));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`modelstub serve: ${err.message}\n\n${usage}`);
      return 2;
    }
    throw err;
  }
  if (options["help"]) {
    process.stdout.write(usage);
    return 0;
  }
  let script: CompiledScript;
  try {
    script = options["script"] ? await loadScriptFile(String(options["script"])) : defaultScript();
  } catch (err) {
    if (err instanceof ScriptError) {
      process.stderr.write(`modelstub serve: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const recordDir = options["record-dir"] as string | undefined;
  const pendingWrites = new Set<Promise<unknown>>();
  const record = (episode: Parameters<typeof writeEpisodeFile>[1]) => {
    if (!recordDir) return;
    const p = writeEpisodeFile(recordDir, episode).catch((err: Error) => process.stderr.write(`modelstub: cannot record episode of ${episode.session}: ${err.message}\n`));
    pendingWrites.add(p);
    void p.finally(() => pendingWrites.delete(p));
  };
  const stub = createStub({
    script,
    clock: options["clock"] === "virtual" ? createVirtualClock() : createRealClock(),
    maxSessions: intOption(options, "max-sessions"),
    maxEpisodeCalls: intOption(options, "max-episode-calls"),
    onEpisodeClosed: record,
  });
  let server;
  try {
    server = await startGrpcServer({ stub, address: String(options["grpc"]) });
  } catch (err) {
    const msg = (err as Error).message;
    const busy = /EADDRINUSE|address already in use|No address added/i.test(msg);
    process.stderr.write(`modelstub serve: cannot listen on ${options["grpc"]}: ${busy ? "the address is in use (is another modelstub running? pick another with --grpc)" : msg}\n`);
    return 2;
  }
  process.stdout.write(`modelstub: serving script ${JSON.stringify(script.name)} (${script.entryCount} entries, ${options["clock"]} clock)\n`);
  let http: RunningHttpServer | undefined;
  if (options["http"]) {
    try {
      http = await startHttpServer({ stub, address: String(options["http"]) });
    } catch (err) {
      const msg = (err as Error).message;
      process.stderr.write(`modelstub serve: cannot listen on ${options["http"]}: ${/EADDRINUSE/.test(msg) ? "the address is in use (pick another with --http)" : msg}\n`);
      await server.close(0);
      return 2;
    }
  }
  process.stdout.write(`modelstub: gRPC listening on ${server.address}\n`);
  if (http) process.stdout.write(`modelstub: HTTP listening on http://${http.address}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolve();
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  await Promise.all([server.close(5000), http?.close(5000)]);
  if (recordDir) for (const e of stub.episodes()) if (e.calls.length > 0) record(e);
  await Promise.all(pendingWrites);
  return 0;
}
