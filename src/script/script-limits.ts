/*
 * Every limit a script is held to, in one place: README ("Checking scripts", "Script limits")
 * lists them with what a user sees past each. Each bounds something a careless or hostile script
 * could otherwise turn into a stalled server, a crash, or a call that fails on every run.
 */

/**
 * The largest script, in UTF-8 bytes: 512 KiB. Refused before parsing. The YAML parser reads
 * about 1 MB a second (a 3.9 MB script took 2.3 to 7 s and 430 MB), and every session waits
 * while LoadScript parses: at the limit a script loads in under a second.
 */
export const maxScriptBytes = 512 * 1024;

/**
 * The largest `text_file` a reply may read (a text too long for the script itself, such as a
 * 600 KB answer `modelstub record` saw): 1 MiB, the bound on a rendered reply. Read at load;
 * a long scalar costs the parser nothing like a script's structure does, so it is not counted
 * in maxScriptBytes.
 */
export const maxTextFileBytes = 1024 * 1024;

/** All the `text_file`s one script may read, together: 64 MiB. */
export const maxTextFilesBytes = 64 * 1024 * 1024;

/**
 * How long a serving process's compile worker may take over one script or fault plan (parsing,
 * the schema, compiling): 10 s. Past it the worker is ended and the text refused
 * (RESOURCE_EXHAUSTED); the largest valid script takes about a second, several on a busy machine.
 */
export const compileTimeBudgetMs = 10_000;

/**
 * The compile worker's heap (V8's old generation): 256 MiB. A script takes up to about 100
 * times its size while it is parsed; past the budget the worker is ended and the text refused.
 */
export const compileHeapMb = 256;

/**
 * The most scripts and fault plans that may wait for the compile worker at once: 1,024. One
 * worker compiles one text at a time; past this a load is refused (RESOURCE_EXHAUSTED) at once.
 * A fleet's clients load a script per session as their tests start (60 sessions at once in the
 * fleet test; up to --max-sessions, 1,000 by default): 32 refused those. The texts have arrived
 * already (each at most 512 KiB), so the bound is on the wait (about 1-3 ms a small text), not
 * on memory.
 */
export const maxCompilesWaiting = 1024;

/** How deep lists and mappings may nest (the script's own levels take about 9). */
export const maxNestingDepth = 64;

/** The most YAML aliases (`*name`) a script may use. */
export const maxAliases = 100;

/**
 * How much script text all aliases of a script may stand for together, in characters: 512 KiB,
 * as much as the script itself may hold. What stops an alias bomb (a few lines that expand to
 * billions of values).
 */
export const maxAliasedChars = 512 * 1024;

/**
 * How much of the last user message `match.regex` sees: its first 65,536 characters (UTF-16
 * code units, as JavaScript counts them). Past them the regex matches as if the message ended
 * there. Matching is linear in this and in the size of the regex, which is bounded below.
 */
export const maxRegexInputChars = 64 * 1024;

/** The longest `match.regex`, in characters. */
export const maxRegexChars = 2048;

/**
 * The largest compiled `match.regex`, in RE2 program instructions (a plain character is one,
 * `a{1,100}` about 200). Matching costs up to this many steps per character of input.
 */
export const maxRegexProgram = 500;

/**
 * The longest scripted status message, in UTF-8 bytes. gRPC percent-encodes it into the
 * `grpc-message` trailer (up to 3 bytes per byte), and gRPC's C core clients (grpcio, grpc++)
 * refuse a call whose trailers pass 8 KiB; 1 KiB, encoded, leaves room for the trailers.
 */
export const maxStatusMessageBytes = 1024;

/**
 * The most a status's scripted trailers may weigh, in bytes, counted as HTTP/2 counts a header
 * list (RFC 7541, 4.1): each trailer's name and value plus 32. With the message, a scripted
 * status stays under the 8 KiB that gRPC C core clients accept.
 */
export const maxTrailerBytes = 4096;

/** The largest proto3 uint32: counts the script gives that travel as uint32 fields. */
export const maxUint32 = 4_294_967_295;

/**
 * The largest scripted token count: input_tokens and output_tokens each. Their sum travels as
 * total_tokens, a uint32, so each gets half of its range.
 */
export const maxTokenCount = 2_147_483_647;

/** The most problems a script error lists; the rest are counted, not shown. */
export const maxIssuesShown = 20;

/** The longest line of a script error, in characters; a longer one is cut in the middle. */
export const maxIssueChars = 500;

/**
 * The longest script error message, in bytes as a gRPC status carries it: percent-encoded (grpc-js
 * sends `grpc-message` through encodeURI, so a space is 3 bytes). 7 KiB keeps LoadScript's status,
 * with grpc-status beside it, under the 8 KiB of trailers gRPC's C core clients accept, whole.
 */
export const maxScriptErrorBytes = 7 * 1024;
