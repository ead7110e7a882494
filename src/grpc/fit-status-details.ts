/**
 * The most a status message may take on the wire: 7 KiB, percent-encoded. grpc-js sends the
 * message as the `grpc-message` trailer through encodeURI (a space becomes %20, a non-ASCII
 * byte %XX), and gRPC's C core clients (grpcio, grpc++) refuse trailers past 8 KiB: a 400 KB
 * message reached Python as "received metadata size exceeds hard limit" instead of its status.
 * 7 KiB leaves room for grpc-status and a few trailers.
 */
export const maxStatusDetailsWireBytes = 7 * 1024;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with every lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, ES2024). */
const wellFormed = (text: string) => text.replace(loneSurrogate, "\uFFFD");

/** The size of `text` as grpc-js writes it into `grpc-message`. */
function wireBytes(text: string): number {
  return encodeURI(text).length;
}

/**
 * A status message that fits `maxWireBytes` once percent-encoded: the message itself when it
 * fits, else as many whole lines as fit (a whole prefix when the first line alone is too long),
 * then a line saying how much was cut. Lone surrogates, which encodeURI throws on (and grpc-js
 * with it), become U+FFFD.
 */
export function fitStatusDetails(details: string, maxWireBytes = maxStatusDetailsWireBytes): string {
  const text = wellFormed(details);
  if (wireBytes(text) <= maxWireBytes) return text;
  const note = (cut: number) => `\n... (${cut} more characters cut: the status message is kept under ${Math.floor(maxWireBytes / 1024)} KiB)`;
  const budget = maxWireBytes - wireBytes(note(text.length));
  // The longest prefix that fits, by bisection on its length (encoding grows with it).
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (wireBytes(wellFormed(text.slice(0, mid))) <= budget) lo = mid;
    else hi = mid - 1;
  }
  const lineEnd = text.lastIndexOf("\n", lo);
  const keep = lineEnd > 0 ? lineEnd : lo;
  const kept = wellFormed(text.slice(0, keep));
  return `${kept}${note(text.length - keep)}`;
}
