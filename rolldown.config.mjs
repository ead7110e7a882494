import { defineConfig } from "rolldown";

// Packages that read their own files at run time stay in node_modules.
const readsOwnFiles = [/^@grpc\/reflection/, /^grpc-health-check/, /^@grpc\/proto-loader/, /^protobufjs/];

export default defineConfig([
  // The CLI ships as one bundled module (plus lazily loaded chunks per command): Node resolves
  // and links hundreds of small ESM files of zod and protobuf-es slowly, and start-up time to
  // SERVING is something users wait for on every CI job.
  {
    // The compile worker is its own entry: script-compiler.ts starts dist/bundle/compile-worker.mjs
    // beside the chunk it is bundled into.
    input: { modelstub: "src/cli/main.ts", "compile-worker": "src/script/compile-worker.ts" },
    platform: "node",
    external: readsOwnFiles,
    // Minified: V8 parses less text on every start.
    output: { minify: true, cleanDir: true, dir: "dist/bundle", format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "[name]-[hash].mjs" },
  },
  // The library (`import ... from "modelstub"` and "modelstub/proto"), bundled for the same
  // reason: a test file imports it once per file, and the ~300 files of zod, protobuf-es and the
  // engine took 0.7 s to link at load 4 (issue 31). zod, yaml, re2js and protobuf-es are inside
  // (protobuf-es works across copies: its messages are plain objects and its one symbol is
  // Symbol.for, so the user's create/fromBinary take these descriptors; its types still come
  // from the installed package). grpc-js stays in node_modules: createGrpcPort takes the user's
  // credentials, and it is a CommonJS package loaded only with gRPC.
  // gRPC, the HTTP front and the episode files are import()ed by start-server.ts and
  // create-grpc-port.ts when used: each is a chunk of its own, loaded then (docs/library.md).
  // The tsc output in dist/src keeps the types (.d.ts) and serves the checkout's own tools.
  {
    input: { index: "src/index.ts", proto: "src/library/proto.ts", "compile-worker": "src/script/compile-worker.ts" },
    platform: "node",
    external: [...readsOwnFiles, /^@grpc\/grpc-js/],
    output: { minify: true, cleanDir: true, dir: "dist/lib", format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "[name]-[hash].mjs" },
  },
]);
