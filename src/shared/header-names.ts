/**
 * Header names of the public contract, the same names as gRPC metadata keys and as HTTP headers.
 * A request's: the session it selects and its step key (docs/script.md). An answer's (never in an
 * episode's bytes; docs/deploy.md, "Telling a session moved"): the instance that answered, and
 * the episode the call's session is in.
 */
export const sessionHeader = "x-modelstub-session";
export const stepHeader = "x-modelstub-step";
export const instanceHeader = "x-modelstub-instance";
export const episodeHeader = "x-modelstub-episode";
