import { formatOptionsHelp } from "./options.js";
import { serveOptions } from "./serve-options.js";

/** The --help text of `modelstub serve`, also printed after a bad option. */
export const serveUsage = `usage: modelstub serve [options]

Serves a script as modelstub.v1.ModelService and ControlService over gRPC (with health and
reflection), and optionally as the OpenAI chat-completions dialect over HTTP. Every option can
also be set by the environment variable named beside it; a flag wins over its variable.

${formatOptionsHelp(serveOptions)}

Started by npm (npm start, npx), it also shuts down gracefully when its parent process exits.

Exit codes: 0 after a graceful shutdown (SIGTERM or SIGINT), 1 after one in which an episode
could not be written to --record-dir, 2 for a bad option, a bad script, TLS files that cannot be
used, a record directory that cannot be written or an address that cannot be bound.
`;
