/**
 * Rendered output is bounded: a template quoting a huge tool result must not grow without
 * limit. The bound is on a whole rendered reply (its text and its tool calls' arguments), and
 * every template stops as soon as it alone passes it.
 */
export const maxTemplateOutputBytes = 1 << 20;

/** A rendered reply passed the output bound. */
export class TemplateTooLargeError extends Error {
  constructor(readonly size: number) {
    super(`the reply's templates rendered over ${maxTemplateOutputBytes} bytes (the bound on a rendered reply)`);
  }
}
