// collectPeers: results.peers and results.peer (GripMock and mock-llm) from the sections' results.
import { gripmock, mockLlm, results } from "./bench-setup.mjs";

// Peers: GripMock (gRPC; when installed or built from source) and mock-llm (OpenAI-compatible HTTP, the
// one installable here). results.peer is mock-llm when it ran, else GripMock; results.peers both.
export function collectPeers() {
  if (gripmock && (results.unary?.byConcurrency || results.startup?.gripmock || results.stream?.gripmock)) {
    results.peers.push({
      name: "GripMock",
      version: gripmock.version,
      ...(gripmock.commit ? { commit: gripmock.commit } : {}),
      transport: "grpc",
      unary: Object.fromEntries(Object.entries(results.unary?.byConcurrency ?? {}).map(([c, row]) => [c, row.gripmock])),
      startup: results.startup?.gripmock ?? null,
      stream: results.stream?.gripmock ?? null,
    });
  }
  const httpRows = Object.entries(results.http?.byConcurrency ?? {}).filter(([, row]) => row["mock-llm"]);
  if (mockLlm && (httpRows.length || results.http?.startup?.["mock-llm"])) {
    results.peers.push({
      name: "mock-llm",
      package: mockLlm.package,
      version: mockLlm.version,
      transport: "http",
      config: "default (no mock-llm.yaml): POST /v1/chat/completions echoes the last user message",
      // Stands in for GripMock only when GripMock did not run.
      ...(results.peers.some((p) => p.name === "GripMock")
        ? {}
        : {
            standsInFor:
              "GripMock v3 (not installed: the Go module proxy reachable here refuses github.com/bavix/gripmock/v3; bench/peer/build-gripmock.sh builds it from source)",
          }),
      http: Object.fromEntries(httpRows.map(([c, row]) => [c, row["mock-llm"]])),
      startup: results.http?.startup?.["mock-llm"] ?? null,
    });
  }
  results.peer = results.peers.find((p) => p.name === "mock-llm") ?? results.peers[0] ?? null;
}
