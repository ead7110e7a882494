/**
 * The step id grammar, shared by scripts (their `steps` keys) and requests (`step_id`,
 * `x-modelstub-step`): step ids travel in gRPC metadata and HTTP headers, so they stay plain.
 */
export const stepIdPattern = /^[A-Za-z0-9._:/-]{1,128}$/;

/** The grammar in words, for messages. */
export const stepIdGrammar = "step ids are 1 to 128 characters of A-Z a-z 0-9 . _ : / -";
