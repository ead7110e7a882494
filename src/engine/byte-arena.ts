/**
 * Hands out byte ranges from a few larger buffers instead of one buffer per recorded call: a
 * buffer of its own per call (Buffer.allocUnsafeSlow, each with its own backing store) was the
 * largest cost left in an in-process call after the encoding itself. A journal owns one arena,
 * so its calls' bytes live and die with the journal, never pinning another's memory (which is
 * why Node's shared 8 KiB pool is not used). Chunks start small, for sessions of a few calls,
 * and double up to 64 KiB; a call larger than a chunk gets a buffer of exactly its size.
 */
export class ByteArena {
  private chunk: Buffer | undefined;
  private used = 0;
  private nextSize = 1024;

  /** `size` bytes, uninitialised: the caller writes every one of them. */
  readonly alloc = (size: number): Buffer => {
    if (this.chunk === undefined || this.used + size > this.chunk.length) {
      if (size > maxChunk) return Buffer.allocUnsafeSlow(size);
      this.chunk = Buffer.allocUnsafeSlow(Math.max(size, this.nextSize));
      this.nextSize = Math.min(this.nextSize * 2, maxChunk);
      this.used = 0;
    }
    const bytes = this.chunk.subarray(this.used, this.used + size);
    this.used += size;
    return bytes;
  };
}

const maxChunk = 64 * 1024;
