#!/usr/bin/env node
// The published command. The TypeScript sources compile to dist/ on `npm ci` (the prepare script).
import { main } from "../dist/src/cli/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`modelstub: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
