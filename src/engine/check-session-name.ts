import type { CallStatus } from "../script/compiled-script.js";
import { quoteClipped } from "../shared/clip-text.js";
import { Code } from "../shared/status-code.js";

const sessionNamePattern = /^[A-Za-z0-9._-]{1,128}$/;

/** Checks a session name: it is used in file names and ids, so it stays plain. */
export function checkSessionName(name: string): CallStatus | undefined {
  if (sessionNamePattern.test(name)) return undefined;
  return {
    code: Code.INVALID_ARGUMENT,
    message: `invalid session name ${quoteClipped(name)}: use 1 to 128 of A-Z a-z 0-9 . _ -`,
    trailers: [],
  };
}
