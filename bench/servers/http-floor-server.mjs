#!/usr/bin/env node
// The HTTP floor: bare node:http answering POST /v1/chat/completions with a pre-built constant
// JSON body (modelstub's reply to the bench request, size for size), keep-alive on. The request
// body is read to its end and dropped: nothing is parsed, matched, rendered or recorded, so it
// is as fast as node:http on this machine goes.
//
//   node http-floor-server.mjs --reply FILE [--port 0]
//
// Also answers GET /health ({"status":"healthy"}) and GET /v1/models, for the start-up probe.
// Prints "http-floor: listening on 127.0.0.1:PORT" once bound; SIGTERM/SIGINT stop it.
import fs from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({ options: { reply: { type: "string" }, port: { type: "string", default: "0" } } });
const reply = fs.readFileSync(opts.reply);
const health = Buffer.from('{"status":"healthy"}');
const models = Buffer.from('{"object":"list","data":[{"id":"modelstub","object":"model","created":1700000000,"owned_by":"modelstub"}]}');
const headers = (body) => ({ "content-type": "application/json", "content-length": String(body.length) });
const replyHeaders = headers(reply);
const notFound = Buffer.from('{"error":{"message":"not found"}}');

const server = http.createServer((req, res) => {
  const post = req.method === "POST" && (req.url === "/v1/chat/completions" || req.url === "/chat/completions");
  // Drain the request body before answering, as any server that reads it would.
  req.on("data", () => {});
  req.on("end", () => {
    if (post) return res.writeHead(200, replyHeaders).end(reply);
    if (req.method === "GET" && req.url === "/health") return res.writeHead(200, headers(health)).end(health);
    if (req.method === "GET" && req.url === "/v1/models") return res.writeHead(200, headers(models)).end(models);
    res.writeHead(404, headers(notFound)).end(notFound);
  });
});
// HTTP keep-alive is node:http's default; the idle timeout is its default too (5 s, as modelstub's
// and express's), set here so a change of default does not change the floor.
server.keepAliveTimeout = 5000;
server.on("error", (err) => {
  process.stderr.write(`http-floor: cannot bind: ${err.message}\n`);
  process.exit(2);
});
server.listen(Number(opts.port), "127.0.0.1", () => {
  process.stdout.write(`http-floor: listening on 127.0.0.1:${server.address().port}\n`);
});
const stop = () => {
  server.closeAllConnections?.();
  server.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
