import { isIP } from "node:net";

/**
 * Whether a bind address only listens on this machine: the rule `modelstub serve` applies
 * before it serves ControlService (or the HTTP front) without a token. The CLI keeps its own
 * copy (src/cli/serve.ts): the library sits beside the CLI, and neither imports the other.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}
