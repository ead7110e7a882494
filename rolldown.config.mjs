import { defineConfig } from "rolldown";

// The CLI ships as one bundled module (plus lazily loaded chunks per command): Node resolves
// and links hundreds of small ESM files of zod and protobuf-es slowly, and start-up time to
// SERVING is something users wait for on every CI job. The tsc output in dist/src stays for
// library use and benchmarks.
export default defineConfig({
  // The compile worker is its own entry: script-compiler.ts starts dist/bundle/compile-worker.mjs
  // beside the chunk it is bundled into.
  input: { modelstub: "src/cli/main.ts", "compile-worker": "src/script/compile-worker.ts" },
  platform: "node",
  // Packages that read their own files at run time stay in node_modules.
  external: [/^@grpc\/reflection/, /^grpc-health-check/, /^@grpc\/proto-loader/, /^protobufjs/],
  // Minified: V8 parses less text on every start.
  output: { minify: true, cleanDir: true, dir: "dist/bundle", format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "[name]-[hash].mjs" },
});
