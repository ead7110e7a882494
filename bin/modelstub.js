#!/usr/bin/env node
// The published command. The TypeScript sources compile and bundle to dist/ on `npm ci` (prepare).
import { main } from "../dist/bundle/modelstub.mjs";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`modelstub: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
