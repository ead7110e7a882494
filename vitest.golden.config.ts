import { defineConfig } from "vitest/config";

// Only for `npm run golden:update`: rewrites the committed golden episode on purpose.
export default defineConfig({ test: { include: ["test/golden/*.golden.ts"], testTimeout: 20_000 } });
