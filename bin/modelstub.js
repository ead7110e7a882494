#!/usr/bin/env node
// The published command. The TypeScript sources compile and bundle to dist/ on `npm ci` (prepare).
import { main } from "../dist/bundle/modelstub.mjs";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // serve resolves only once it has drained, closed its listeners and written every episode.
    // A client that still holds its half of a closed connection keeps that socket's handle (and
    // so the process) alive until the client lets go; under `docker stop` that meant SIGKILL.
    if (process.argv[2] === "serve") process.exit(code);
  },
  (err) => {
    process.stderr.write(`modelstub: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
