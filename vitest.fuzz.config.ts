import { defineConfig } from "vitest/config";

// The fuzz suite (`npm run test:fuzz`, CI step .ci/run.d/25-fuzz.sh): kept out of `npm test`.
// Each file starts its own server process; two files at a time on two cores.
export default defineConfig({
  test: {
    include: ["test/fuzz/*.test.ts"],
    maxWorkers: 2,
    testTimeout: 150_000,
    hookTimeout: 60_000,
    // expect.poll waits for something to happen; its timeout only bounds a failure (see vitest.config.ts).
    expect: { poll: { timeout: 15_000 } },
  },
});
