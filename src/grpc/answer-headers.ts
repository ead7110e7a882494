import { Metadata, ServerInterceptingCall, type ServerInterceptor, type ServerUnaryCall, type ServerWritableStream } from "@grpc/grpc-js";
import { episodeHeader, instanceHeader } from "../shared/header-names.js";

/**
 * Puts x-modelstub-instance on every answer of the server, health and reflection included: in
 * the initial metadata of an answer that has some, else in the status's metadata. A call that
 * fails before any message goes out "trailers-only" (one HTTP/2 header block holding the status,
 * which clients show as trailing metadata) and stays so: forcing initial metadata out first
 * would commit the call, and gRPC retry policies never retry a committed call.
 */
export function instanceInterceptor(instance: string): ServerInterceptor {
  return (_method, call) => {
    let sent = false;
    return new ServerInterceptingCall(call, {
      sendMetadata(metadata, next) {
        sent = true;
        metadata.set(instanceHeader, instance);
        next(metadata);
      },
      sendStatus(status, next) {
        if (sent) return next(status);
        const metadata = status.metadata ?? new Metadata();
        metadata.set(instanceHeader, instance);
        next({ ...status, metadata });
      },
    });
  };
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** Where a call's x-modelstub-episode goes: its initial metadata, or its error's trailers. */
export interface EpisodeHeader {
  /** The episode the call is in (undefined: none, such as a refused session name). */
  episode: string | undefined;
  /** Sends the initial metadata, once: before the first message or a successful end. */
  beforeMessage(): void;
  /** An error's metadata with the episode added when no initial metadata carried it. */
  onError(error: { code: number; details: string; metadata?: Metadata }): { code: number; details: string; metadata?: Metadata };
}

/** The episode header of one call; `episode` is set as soon as the call knows it. */
export function episodeHeaderOf(call: AnyCall, episode?: string): EpisodeHeader {
  let sent = false;
  return {
    episode,
    beforeMessage() {
      if (sent) return;
      sent = true;
      const metadata = new Metadata();
      if (this.episode !== undefined) metadata.set(episodeHeader, this.episode);
      call.sendMetadata(metadata);
    },
    onError(error) {
      if (sent || this.episode === undefined) return error;
      const metadata = error.metadata ?? new Metadata();
      metadata.set(episodeHeader, this.episode);
      return { ...error, metadata };
    },
  };
}
