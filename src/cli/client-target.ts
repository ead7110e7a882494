import { credentials as grpcCredentials, type ChannelCredentials, type ChannelOptions } from "@grpc/grpc-js";
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import type { OptionSpec, OptionsOf } from "./options.js";

/**
 * How the client commands (health, episode, session) reach a running server: one address
 * option and one pair of TLS options, so every command dials the same way and documents it alike.
 */
export function clientOptions(addrDescription: string) {
  return [
    {
      name: "addr",
      env: "MODELSTUB_ADDR",
      type: "string",
      arg: "HOST:PORT",
      default: "127.0.0.1:50051",
      description: `${addrDescription} Without it, the address \`serve\` reads from MODELSTUB_GRPC when that is set (0.0.0.0, :: and [::] dial the loopback).`,
    },
    {
      name: "tls",
      type: "boolean",
      description: "Connect with TLS. On by itself when MODELSTUB_TLS_CERT is set (the server's certificate, as `serve` reads it).",
    },
    {
      name: "tls-ca",
      env: "MODELSTUB_TLS_CA",
      type: "string",
      arg: "FILE",
      description:
        "PEM root certificate to trust with --tls. Default: the certificate in MODELSTUB_TLS_CERT when set (trusted as it is, whatever host name it carries, since the client dials the server it names), else the system roots. Give the CA here for a CA-signed certificate.",
    },
  ] as const satisfies readonly OptionSpec[];
}

/** What clientOptions resolve to: the address and TLS options of a client command. */
export type ClientOptions = OptionsOf<ReturnType<typeof clientOptions>>;

/** The option every ControlService command takes: the server's --control-token. */
export const controlTokenOption = {
  name: "control-token",
  env: "MODELSTUB_CONTROL_TOKEN",
  type: "string",
  arg: "TOKEN",
  description: "Bearer token for a server started with --control-token.",
} as const satisfies OptionSpec;

/** The address to dial for a server bound to `bind`: a wildcard bind is dialled on the loopback. */
export function probeAddressOf(bind: string): string {
  const colon = bind.lastIndexOf(":");
  if (colon < 0) return bind;
  const host = bind.slice(0, colon);
  const port = bind.slice(colon + 1);
  if (host === "0.0.0.0" || host === "") return `127.0.0.1:${port}`;
  if (host === "::" || host === "[::]") return `[::1]:${port}`;
  return bind;
}

/** The host of HOST:PORT, without the brackets of an IPv6 address. */
function hostOf(addr: string): string {
  const colon = addr.lastIndexOf(":");
  return (colon < 0 ? addr : addr.slice(0, colon)).replace(/^\[|\]$/g, "");
}

/** Where a client command dials, and how. */
export interface ClientTarget {
  addr: string;
  creds: ChannelCredentials;
  channelOptions?: ChannelOptions;
}

/**
 * The target and credentials of the clientOptions. Flags first, then MODELSTUB_ADDR /
 * MODELSTUB_TLS_CA, then what `serve` reads from the same environment (MODELSTUB_GRPC,
 * MODELSTUB_TLS_CERT): in a container the HEALTHCHECK (or a `session` command run with
 * `docker exec`) reaches the server the image configured, TLS included, with no flags.
 * Rejects when the certificate to trust cannot be read.
 */
export async function clientTarget(options: ClientOptions, addrFromDefault: boolean, env: NodeJS.ProcessEnv = process.env): Promise<ClientTarget> {
  const addr = addrFromDefault && env["MODELSTUB_GRPC"] ? probeAddressOf(env["MODELSTUB_GRPC"]) : options["addr"];
  const serverCert = env["MODELSTUB_TLS_CERT"] || undefined;
  if (!options["tls"] && !serverCert) return { addr, creds: grpcCredentials.createInsecure() };
  // grpc-js sends the host as the TLS server name, and Node warns (DEP0123) when that is an IP
  // address: noise to someone who dialled 127.0.0.1 on purpose, on stderr that scripts read.
  if (isIP(hostOf(addr)) !== 0) process.noDeprecation = true;
  const ca = options["tls-ca"];
  if (ca) return { addr, creds: grpcCredentials.createSsl(await readFile(ca)) };
  if (!serverCert) return { addr, creds: grpcCredentials.createSsl(null) };
  // Trusting exactly the server's own certificate: whichever name it was issued for, it is the
  // one the client expects, so the host name check (which a loopback address would fail) is off.
  // A name for SNI keeps Node from warning about an IP address as the TLS server name.
  return {
    addr,
    creds: grpcCredentials.createSsl(await readFile(serverCert), null, null, { checkServerIdentity: () => undefined }),
    channelOptions: { "grpc.ssl_target_name_override": "localhost" },
  };
}
