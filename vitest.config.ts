import { configDefaults, defineConfig } from "vitest/config";

// How long a test (or hook) may run before it fails as hung: 20 s, or MODELSTUB_TEST_TIMEOUT_MS.
// The loaded CI step (.ci/run.d/20-under-load.sh) raises it: with three suites and busy loops on
// 2 cores a process gets a fraction of a core and a test that takes 3 s on a quiet machine takes a minute.
// Only a hang is bounded by it: no test asserts how long anything took (issue 31).
const testTimeout = Number(process.env.MODELSTUB_TEST_TIMEOUT_MS) || 20_000;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The fuzz suite has its own config (vitest.fuzz.config.ts, `npm run test:fuzz`).
    exclude: [...configDefaults.exclude, "test/fuzz/**"],
    // Servers bind loopback ports; child-process tests spawn the built CLI. Two cores: keep
    // the file-level parallelism modest so deadline tests are not starved.
    maxWorkers: 2,
    testTimeout,
    hookTimeout: testTimeout,
    // expect.poll waits for something to happen; its timeout only bounds a failure. Vitest's
    // default of 1 s is a wall-clock race a loaded CI machine loses (a health Watch's
    // NOT_SERVING after SIGTERM, a log line after a call): wait up to most of the test's own time.
    expect: { poll: { timeout: testTimeout * 0.75 } },
  },
});
