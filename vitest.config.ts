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
  },
});
