/**
 * The text input of `tidemark write`, readable again from the start: a dynamic-bucket write whose
 * bucket assignment went stale before its commit writes its rows again (as `Table.append` does
 * with rows in memory). A regular file is simply opened again; stdin and pipes are copied to a
 * spool file on the first read when a replay may be needed, and the copy is read afterwards.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** An input that can be read from the start once per attempt. */
export interface ReplayableInput {
  /**
   * The input from its start. The first call reads the original; later calls read it again (a
   * regular file) or its spooled copy.
   * @throws Error when the input cannot be read again (it was not spooled, or the first read did
   *   not reach its end).
   */
  open(): Readable;
  /** Removes the spool file, if any. */
  close(): Promise<void>;
}

/**
 * The input at `path` (stdin when undefined). With `replayable`, an input that is not a regular
 * file (stdin, a pipe) is copied to a temporary file as it is first read.
 */
export async function replayableInput(path: string | undefined, stdin: Readable, replayable: boolean): Promise<ReplayableInput> {
  if (path !== undefined && (await stat(path)).isFile()) {
    return { open: () => createReadStream(path), close: () => Promise.resolve() };
  }
  const original = (): Readable => (path === undefined ? stdin : createReadStream(path));
  if (!replayable) {
    let opened = false;
    return {
      open: () => {
        if (opened) throw new Error('the input is a stream and was already read: it cannot be read again');
        opened = true;
        return original();
      },
      close: () => Promise.resolve(),
    };
  }
  return new SpooledInput(original, await mkdtemp(join(tmpdir(), 'tidemark-input-')));
}

/** A stream input copied to `dir/input` on its first read. */
class SpooledInput implements ReplayableInput {
  private reads = 0;
  private complete = false;
  private closed = false;

  constructor(
    private readonly original: () => Readable,
    private readonly dir: string,
  ) {}

  private get spool(): string {
    return join(this.dir, 'input');
  }

  open(): Readable {
    if (this.closed) throw new Error('the input was closed');
    if (this.reads++ === 0) return Readable.from(this.copying(this.original()), { objectMode: false });
    if (!this.complete) throw new Error('the input was not read to its end, so its copy cannot be read again');
    return createReadStream(this.spool);
  }

  /** Passes `input` through, writing every chunk to the spool file (with its backpressure). */
  private async *copying(input: Readable): AsyncGenerator<Buffer> {
    const out: WriteStream = createWriteStream(this.spool);
    try {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        if (!out.write(bytes)) await once(out, 'drain');
        yield bytes;
      }
      out.end();
      await finished(out);
      this.complete = true;
    } finally {
      if (!this.complete) out.destroy();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await rm(this.dir, { recursive: true, force: true });
  }
}
