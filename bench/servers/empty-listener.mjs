#!/usr/bin/env node
// An empty Node listener: node:net listening on a port, closing every connection it accepts.
// Nothing is loaded but Node itself, so spawn to its first accepted TCP connection is Node's own
// start-up floor (the start-up section's "tcp" probe).
//
//   node empty-listener.mjs [--port 0]
//
// Prints "empty-listener: listening on 127.0.0.1:PORT" once bound; SIGTERM/SIGINT stop it.
import net from "node:net";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({ options: { port: { type: "string", default: "0" } } });
const server = net.createServer((socket) => socket.destroy());
server.listen(Number(opts.port), "127.0.0.1", () => process.stdout.write(`empty-listener: listening on 127.0.0.1:${server.address().port}\n`));
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => server.close(() => process.exit(0)));
