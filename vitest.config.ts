import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The fuzz suite has its own config (vitest.fuzz.config.ts, `npm run test:fuzz`).
    exclude: [...configDefaults.exclude, "test/fuzz/**"],
    // Servers bind loopback ports; child-process tests spawn the built CLI. Two cores: keep
    // the file-level parallelism modest so deadline tests are not starved.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits for something to happen; its timeout only bounds a failure. Vitest's
    // default of 1 s is a wall-clock race a loaded CI machine loses (a health Watch's
    // NOT_SERVING after SIGTERM, a log line after a call): wait up to most of the test's own time.
    expect: { poll: { timeout: 15_000 } },
  },
});
