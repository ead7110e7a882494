import { isIP } from "node:net";

/**
 * Whether a bind address only listens on this machine: the rule `modelstub serve` and
 * startServer() apply before they serve ControlService (or the HTTP front) without a token.
 * Here, under both, since the CLI and the library do not import each other.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}
