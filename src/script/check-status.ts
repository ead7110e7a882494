import type { Report } from "./report.js";
import type { ErrorInput } from "./script-schema.js";
import { maxStatusMessageBytes, maxTrailerBytes } from "./script-limits.js";
import { episodeHeader, instanceHeader } from "../shared/header-names.js";

/*
 * A scripted status must reach every client as written. Without these checks a script that
 * loads could fail every call that uses it: a `transfer-encoding` trailer makes grpc-js answer
 * INTERNAL (HTTP/2 forbids it); `grpc-status: "0"` overrides the scripted code, so UNAVAILABLE
 * arrives as OK; a line break or a non-ASCII character in a value, or a `-bin` value that is
 * not base64, fails as INTERNAL; a message with a lone surrogate cannot be percent-encoded.
 */

/**
 * Trailer names the HTTP layers own. HTTP/2 forbids the connection-specific ones in any header
 * block (RFC 9113, 8.2.2); the others describe the HTTP message itself, and the HTTP front does
 * not send a scripted one.
 */
const httpOwned: Record<string, string> = {
  connection: "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  "keep-alive": "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  "proxy-connection": "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  "transfer-encoding": "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  upgrade: "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  "http2-settings": "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  te: "HTTP/2 forbids connection-specific fields (RFC 9113, 8.2.2)",
  host: "it names the server a request is for, not part of an answer",
  trailer: "it announces trailers, which HTTP/2 does not use",
  "content-length": "the HTTP layer sets it for the body it sends",
  "content-type": "the HTTP layer sets it for the body it sends",
  date: "the HTTP front sets it",
  // Not HTTP's, but as much the server's own: every answer carries them (header-names.ts).
  [instanceHeader]: "modelstub sets it on every answer: the instance that answered",
  [episodeHeader]: "modelstub sets it on every answer: the episode of the call's session",
};

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The first character a metadata text value cannot carry, with its offset; undefined when none. */
function badCharacter(value: string): { at: number; words: string } | undefined {
  const at = value.search(/[^\x20-\x7e]/);
  if (at < 0) return undefined;
  const code = value.codePointAt(at)!;
  const names: Record<number, string> = { 10: "a line break (\\n)", 13: "a carriage return (\\r)", 9: "a tab (\\t)", 0: "a NUL (\\u0000)" };
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  return {
    at,
    words:
      names[code] ??
      (code < 0x20 || code === 0x7f ? `the control character U+${hex}` : `the non-ASCII character ${JSON.stringify(String.fromCodePoint(code))} (U+${hex})`),
  };
}

/** A lone UTF-16 surrogate: encodeURI (how grpc-js writes grpc-message) throws on one. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Checks that a scripted status (an `error:` mapping at `path`) can travel as written. */
export function checkStatus(e: ErrorInput, path: (string | number)[], report: Report): void {
  if (e.message !== undefined) {
    const bytes = Buffer.byteLength(e.message, "utf8");
    if (loneSurrogate.test(e.message)) {
      report(
        [...path, "message"],
        "the message holds half of a UTF-16 surrogate pair, which no status can carry",
        "write the character whole (in YAML, \\U0001F600 for an emoji), or remove the escape",
      );
    } else if (bytes > maxStatusMessageBytes) {
      report(
        [...path, "message"],
        `the message is ${bytes} bytes long (UTF-8); the most is ${maxStatusMessageBytes}`,
        "gRPC sends it percent-encoded in a trailer, and C core clients (grpcio, grpc++) refuse trailers past 8 KiB: shorten it",
      );
    }
  }
  let weight = 0;
  for (const [name, value] of Object.entries(e.trailers ?? {})) {
    weight += name.length + value.length + 32;
    const trailers = [...path, "trailers"];
    if (name.startsWith("grpc-")) {
      const hint =
        name === "grpc-status" || name === "grpc-message"
          ? "set the status with code: and message: of this error"
          : "name your own trailers otherwise, like x-retry-reason";
      report(trailers, `trailer \`${name}\` is reserved: gRPC writes the grpc-* trailers itself, and a scripted one would replace them`, hint, { key: name });
      continue;
    }
    const owner = httpOwned[name];
    if (owner) {
      report(trailers, `trailer \`${name}\` is not allowed: ${owner}`, `remove it, or give your trailer another name, like x-${name}`, { key: name });
      continue;
    }
    if (name.endsWith("-bin")) {
      if (!base64.test(value)) {
        report(
          [...trailers, name],
          `the value of \`${name}\` is not base64: a name ending in -bin carries bytes, written in base64`,
          "write the bytes in base64 (like AAEC, padding optional), or drop -bin from the name for a text value",
        );
      }
      continue;
    }
    const bad = badCharacter(value);
    if (bad) {
      report(
        [...trailers, name],
        `the value of \`${name}\` holds ${bad.words} at character ${bad.at + 1}: trailer values are printable ASCII`,
        "use characters from space to ~ only; for bytes or other text, name the trailer with -bin and write the value in base64",
      );
    } else if (/^ | $/.test(value)) {
      report(
        [...trailers, name],
        `the value of \`${name}\` ${value.startsWith(" ") ? "starts" : "ends"} with a space, which HTTP/2 does not allow (RFC 9113, 8.2.1)`,
        "remove the space at its ends",
      );
    }
  }
  if (weight > maxTrailerBytes) {
    report(
      [...path, "trailers"],
      `the trailers weigh ${weight} bytes (each its name, its value and 32, as HTTP/2 counts them); the most is ${maxTrailerBytes}`,
      "gRPC C core clients (grpcio, grpc++) refuse trailers past 8 KiB, the message included: send fewer or shorter trailers",
    );
  }
}

/**
 * Whether a trailer can be scripted as it is (a recorder keeps only those): a lowercase name
 * outside gRPC's and HTTP's own, a printable ASCII value without space at either end, base64 for
 * a `-bin` name.
 */
export function isScriptableTrailer(name: string, value: string): boolean {
  if (!/^[a-z][a-z0-9._-]*$/.test(name) || name.startsWith("grpc-") || name in httpOwned) return false;
  if (badCharacter(value) || value !== value.trim()) return false;
  return !name.endsWith("-bin") || base64.test(value);
}
