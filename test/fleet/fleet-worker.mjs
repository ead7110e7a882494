#!/usr/bin/env node
// One client process of the fleet test: drives its sessions concurrently through one address
// (the balancer, or a single instance for the reference run) and prints one JSON line on stdout:
// for each session, which instance answered each call (the balancer's x-modelstub-instance
// header; absent on a single instance) and what the calls answered.
//
//   node fleet-worker.mjs --grpc HOST:PORT --http http://HOST:PORT --sessions a,b,c --phase load|more
//
// load: LoadScript (session-script.yaml), then five calls per session (Generate, GenerateStream,
//       an HTTP chat completion or a Generate, Generate on step `final`, GenerateStream), then
//       VerifySession; each call of a session waits for the one before (a session is a
//       conversation), the sessions run side by side.
// more: one more Generate per session (after an instance was stopped, or between phases).
// inflight: one call per session on step `inflight`, which sends part of its reply and then holds
//       (half unary, half streamed), reported however it ends: the fleet test kills the
//       sessions' instance while they are held, to see what a client gets.
// Every answer's x-modelstub-instance and x-modelstub-episode are reported with it.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { chatCompletion, connect, modelPb, REPO } from "./fleet-lib.mjs";

const { values: o } = parseArgs({
  options: { grpc: { type: "string" }, http: { type: "string" }, sessions: { type: "string" }, phase: { type: "string", default: "load" } },
});
const sessions = o.sessions.split(",").filter(Boolean);
const client = connect(o.grpc);
const script = fs.readFileSync(path.join(REPO, "test/fleet/session-script.yaml"), "utf8");
const user = (content) => ({ model: "modelstub", messages: [{ role: modelPb.Role.USER, content }] });
const streamText = (frames) => frames.map((f) => (f.frame.case === "textDelta" ? f.frame.value : "")).join("");

async function load(session, index) {
  const instances = [];
  const episodes = [];
  const texts = [];
  const seen = (r) => (instances.push(r.instance ?? null), episodes.push(r.episode ?? null), r);
  seen(await client.control("LoadScript", session, { script, sourceName: "test/fleet/session-script.yaml" }));
  texts.push(seen(await client.generate(session, user(`one, from ${session}`))).response.message.content);
  texts.push(streamText(seen(await client.generateStream(session, user(`two, streamed, from ${session}`))).frames));
  if (index % 2 === 0) {
    // Half the sessions make their third call over the HTTP front, through the same balancer.
    const r = seen(await chatCompletion(o.http, session, `three, over HTTP, from ${session}`));
    if (r.status !== 200) throw new Error(`${session}: chat completion answered ${r.status}: ${JSON.stringify(r.body)}`);
    texts.push(r.body.choices[0].message.content);
  } else {
    texts.push(seen(await client.generate(session, user(`three, from ${session}`))).response.message.content);
  }
  texts.push(seen(await client.generate(session, { ...user(`four, from ${session}`), stepId: "final" })).response.message.content);
  texts.push(streamText(seen(await client.generateStream(session, user(`five, streamed, from ${session}`))).frames));
  const verify = seen(await client.control("VerifySession", session)).response;
  return {
    instances,
    episodes,
    texts,
    verify: { satisfied: verify.satisfied, unused: verify.unused.map((u) => `${u.entry}:${u.remaining}`), message: verify.message },
  };
}

async function more(session) {
  const r = await client.generate(session, user(`six, after the stop, from ${session}`));
  return { instances: [r.instance ?? null], episodes: [r.episode ?? null], texts: [r.response.message.content] };
}

async function inflight(session, index) {
  const streamed = index % 2 === 1;
  const request = { ...user(`held, from ${session}`), stepId: "inflight" };
  const ended = (r) => ({
    streamed,
    code: r.code ?? 0,
    details: r.details ?? "",
    frames: r.frames?.length ?? r.frames ?? 0,
    instance: r.instance ?? null,
    episode: r.episode ?? null,
  });
  // No deadline: on the fleet's virtual clock a hang would end at the deadline at once.
  return (streamed ? client.generateStream(session, request, Infinity) : client.generate(session, request, Infinity)).then(ended, ended);
}

const out = {};
try {
  const run = { load, more, inflight }[o.phase];
  await Promise.all(sessions.map(async (s, i) => (out[s] = await run(s, Number(s.split("-").pop()) || i))));
  process.stdout.write(`${JSON.stringify(out)}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: String(err?.stack ?? err) })}\n`);
  process.exitCode = 1;
} finally {
  client.close();
}
