import { create } from "@bufbuild/protobuf";
import type { ServerWritableStream } from "@grpc/grpc-js";
import { WatchEventKind, WatchSessionResponseSchema, type WatchSessionResponse } from "../../gen/modelstub/v1/control_pb.js";
import { AppliedFaultSchema, CallMethod } from "../../gen/modelstub/v1/episode_pb.js";
import type { CallEvent } from "../engine/call-event.js";
import type { Stub } from "../engine/create-stub.js";
import { Code } from "../shared/status-code.js";

/** The most events a watcher may leave unread before the watch is ended (RESOURCE_EXHAUSTED): a watcher that stops reading cannot grow the server's memory. */
export const maxUnreadWatchEvents = 10_000;

/** A CallEvent as its WatchSessionResponse. */
export function watchMessageOf(e: CallEvent): WatchSessionResponse {
  return create(WatchSessionResponseSchema, {
    kind: e.kind === "started" ? WatchEventKind.CALL_STARTED : WatchEventKind.CALL_ENDED,
    sequence: BigInt(e.sequence),
    stepId: e.step,
    occurrence: e.occurrence,
    cleanOccurrence: e.cleanOccurrence,
    method: e.method === "stream" ? CallMethod.GENERATE_STREAM : CallMethod.GENERATE,
    ...(e.fault ? { fault: create(AppliedFaultSchema, e.fault) } : {}),
    ...(e.outcome !== undefined ? { outcome: e.outcome, code: e.code ?? 0, entry: e.entry ?? "", endMs: BigInt(e.endMs ?? 0) } : {}),
    startMs: BigInt(e.startMs),
    episode: e.episode,
  });
}

/**
 * Streams `session`'s call events to `call` until it is cancelled: a WATCHING message first, so
 * the client knows every later call is reported. A client that stops reading is cut off with
 * RESOURCE_EXHAUSTED once maxUnreadWatchEvents are waiting (grpc-js buffers what write() is
 * given); the listener goes with the call. `open` holds the function that ends the watch, for shutdown.
 */
export function streamWatch(stub: Stub, session: string, call: ServerWritableStream<Record<string, unknown>, unknown>, open: Set<() => void>): void {
  let unread = 0;
  let stop: () => void = () => {};
  const end = () => {
    stop();
    call.removeListener("cancelled", end);
    open.delete(finish);
  };
  // A shutting-down server ends its watches (as health's), so its grace is not spent on them.
  const finish = () => {
    end();
    call.end();
  };
  open.add(finish);
  const write = (m: WatchSessionResponse) => {
    unread++;
    call.write(m, () => unread--);
  };
  call.on("cancelled", end);
  stop = stub.watch(session, (e) => {
    if (unread >= maxUnreadWatchEvents) {
      end();
      call.emit("error", {
        code: Code.RESOURCE_EXHAUSTED,
        details: `WatchSession: ${maxUnreadWatchEvents} events were left unread; read the stream as it comes`,
      });
      return;
    }
    write(watchMessageOf(e));
  });
  write(create(WatchSessionResponseSchema, { kind: WatchEventKind.WATCHING, episode: stub.episodeIdOf(session) ?? "" }));
}
