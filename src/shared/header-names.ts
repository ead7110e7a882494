/**
 * Response headers of the public contract, the same names as gRPC metadata and as HTTP headers
 * (docs/deploy.md, "Telling a session moved"): the instance that answered, and the episode the
 * call's session is in. Never in an episode's bytes.
 */
export const instanceHeader = "x-modelstub-instance";
export const episodeHeader = "x-modelstub-episode";
