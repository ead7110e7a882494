import { Code } from "./status-code.js";

/** The words of an error for a message: an Error's message, anything else as a string. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A gRPC status: a code, its message, and its trailing metadata in order. */
export interface StatusFields {
  code: number;
  message: string;
  /** Trailing metadata, in order (the status's details, as the script gives them). */
  trailers: readonly (readonly [string, string])[];
  /** false for the stub's own limits (see CallStatus in script/compiled-script.ts). */
  retryable?: false;
}

/**
 * A status thrown: what the engine throws when it refuses a control call (a bad or missing
 * session, an episode it could not record), and what every front turns into its answer (gRPC
 * sends it as it is, the HTTP front maps the code to an HTTP status). One class read by
 * `instanceof`, rather than errors carrying a `status` read back by their shape.
 */
export class StatusError extends Error implements StatusFields {
  override readonly name = "StatusError";
  readonly code: number;
  readonly trailers: readonly (readonly [string, string])[];
  readonly retryable?: false;

  constructor(status: StatusFields) {
    super(status.message);
    this.code = status.code;
    this.trailers = status.trailers;
    if (status.retryable === false) this.retryable = false;
  }

  /**
   * Anything thrown as a StatusError: a StatusError as it is, anything else INTERNAL "modelstub
   * internal error: ..." (a bug of the stub's, or of a hook passed to it: the caller is told,
   * never left hanging).
   */
  static from(err: unknown): StatusError {
    if (err instanceof StatusError) return err;
    return new StatusError({ code: Code.INTERNAL, message: `modelstub internal error: ${errorText(err)}`, trailers: [] });
  }

  /** The status as a plain record, as the episode records it. */
  toStatus(): StatusFields {
    return this.retryable === false
      ? { code: this.code, message: this.message, trailers: this.trailers, retryable: false }
      : { code: this.code, message: this.message, trailers: this.trailers };
  }
}
