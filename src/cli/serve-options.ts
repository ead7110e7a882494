import type { OptionName, OptionSource, OptionSpec, OptionsOf } from "./options.js";

/** Every option of `modelstub serve`. --help, MODELSTUB_* variables and parsing all come from here. */
export const serveOptions = [
  {
    name: "script",
    env: "MODELSTUB_SCRIPT",
    type: "string",
    arg: "FILE",
    description: "Script to serve (YAML or JSON). Without it, the built-in default script.",
  },
  {
    name: "grpc",
    env: "MODELSTUB_GRPC",
    type: "string",
    arg: "HOST:PORT",
    default: "127.0.0.1:50051",
    description: "Address of the gRPC server. Loopback by default: a stub is not a public service.",
  },
  {
    name: "http",
    env: "MODELSTUB_HTTP",
    type: "string",
    arg: "HOST:PORT",
    description:
      "Also serve the OpenAI-compatible HTTP dialect here (conventionally 127.0.0.1:8080). Off unless given. Off loopback it needs --control-token, sent as `authorization: Bearer TOKEN` on every HTTP request.",
  },
  {
    name: "openrouter-comments",
    env: "MODELSTUB_OPENROUTER_COMMENTS",
    type: "boolean",
    description:
      "Begin every streamed chat completion with OpenRouter's keep-alive comment line `: OPENROUTER PROCESSING`, for SSE parsers that must skip comments.",
  },
  {
    name: "instance",
    env: "MODELSTUB_INSTANCE",
    type: "string",
    arg: "ID",
    description:
      "This instance's id, sent on every answer as x-modelstub-instance (gRPC metadata, HTTP header) and at the head of x-modelstub-episode; 1 to 128 of A-Z a-z 0-9 . _ -. In a fleet give each instance its own (a pod name). Default: host name and process id.",
  },
  {
    name: "clock",
    env: "MODELSTUB_CLOCK",
    type: "string",
    arg: "MODE",
    values: ["real", "virtual"],
    default: "real",
    description: "real: declared latencies are waited out; virtual: they complete at once and are still recorded.",
  },
  {
    name: "replay-mode",
    env: "MODELSTUB_REPLAY_MODE",
    type: "string",
    arg: "MODE",
    values: ["strict", "unordered", "order-only"],
    description:
      "How requests are held to the entries' recorded `request:` (what `record` and `script from-episode` write), over each script's own `replay.mode`: strict (each request must match the entry that answers it), unordered (the first unused entry whose request matches answers), order-only (not compared). Default: the script's, else strict.",
  },
  {
    name: "record-dir",
    env: "MODELSTUB_RECORD_DIR",
    type: "string",
    arg: "DIR",
    description: "Write each session's episode as <session>.episode.binpb (and .json) here, on reset and at shutdown.",
  },
  {
    name: "control-token",
    env: "MODELSTUB_CONTROL_TOKEN",
    type: "string",
    arg: "TOKEN",
    description:
      "ControlService calls must send `authorization: Bearer TOKEN`. Required when --grpc or --http is not a loopback address; an HTTP front off loopback requires it on every request.",
  },
  {
    name: "tls-cert",
    env: "MODELSTUB_TLS_CERT",
    type: "string",
    arg: "FILE",
    description: "Serve gRPC over TLS with this PEM certificate chain (with --tls-key).",
  },
  { name: "tls-key", env: "MODELSTUB_TLS_KEY", type: "string", arg: "FILE", description: "PEM private key for --tls-cert." },
  {
    name: "max-message-bytes",
    env: "MODELSTUB_MAX_MESSAGE_BYTES",
    type: "string",
    arg: "N",
    default: "4194304",
    description: "Largest request accepted; larger ones answer RESOURCE_EXHAUSTED (gRPC) or 413 (HTTP).",
  },
  {
    name: "max-sessions",
    env: "MODELSTUB_MAX_SESSIONS",
    type: "string",
    arg: "N",
    default: "1000",
    description: "Sessions kept at most; more answer RESOURCE_EXHAUSTED.",
  },
  {
    name: "session-idle-timeout",
    env: "MODELSTUB_SESSION_IDLE_TIMEOUT",
    type: "string",
    arg: "DURATION",
    description:
      "Delete sessions with no call running that were not used (no call, reset or script load) for this long, writing their episodes to --record-dir first: frees their --max-sessions slots. A session used again afterwards starts a new episode, as after a reset. Off unless given.",
  },
  {
    name: "max-episode-calls",
    env: "MODELSTUB_MAX_EPISODE_CALLS",
    type: "string",
    arg: "N",
    default: "100000",
    description: "Calls one episode records at most; then RESOURCE_EXHAUSTED until the session is reset.",
  },
  {
    name: "max-episode-bytes",
    env: "MODELSTUB_MAX_EPISODE_BYTES",
    type: "string",
    arg: "N",
    default: "67108864",
    description: "Bytes one episode records at most (64 MiB: its calls as encoded in the .binpb); then RESOURCE_EXHAUSTED until the session is reset.",
  },
  {
    name: "grace",
    env: "MODELSTUB_GRACE",
    type: "string",
    arg: "DURATION",
    default: "10s",
    description: "On SIGTERM/SIGINT, how long calls in flight may finish before they are cut off.",
  },
  {
    name: "loop-warn",
    env: "MODELSTUB_LOOP_WARN",
    type: "string",
    arg: "DURATION",
    default: "100ms",
    description:
      "Log a warning `event loop held` (longest_ms; longest_cpu_ms, the server's own work in CPU time) for each second in which the event loop was held longer than this: every session's calls waited that long. 0 turns it off.",
  },
  {
    name: "log-level",
    env: "MODELSTUB_LOG_LEVEL",
    type: "string",
    arg: "LEVEL",
    values: ["debug", "info", "warn", "error", "silent"],
    default: "info",
    description:
      "Least severe log line written to stderr; info logs one line per call, debug adds the resolved configuration (each value and whether a flag or a variable set it) and the script loaded.",
  },
  {
    name: "log-format",
    env: "MODELSTUB_LOG_FORMAT",
    type: "string",
    arg: "FORMAT",
    values: ["auto", "json", "text"],
    default: "auto",
    description: "auto: readable text on a terminal, JSON lines otherwise (containers, CI).",
  },
  {
    name: "quiet",
    env: "MODELSTUB_QUIET",
    type: "boolean",
    description: "Only warnings and errors (same as --log-level warn); a --log-level flag wins over it.",
  },
  { name: "help", type: "boolean", description: "Print this help." },
] as const satisfies readonly OptionSpec[];

/** What `serve`'s command line resolves to. */
export type ServeOptions = OptionsOf<typeof serveOptions>;

/** Where each of `serve`'s options came from. */
export type ServeOptionSources = Readonly<Record<OptionName<typeof serveOptions>, OptionSource>>;
