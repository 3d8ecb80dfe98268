/**
 * The input of a write that may have to be read again (a re-planned dynamic-bucket write): a
 * regular file is opened again, stdin and pipes are read again from their spooled copy, which is
 * removed on close; an input that was not spooled, or not read to its end, is refused.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { replayableInput } from '../src/input/replayable-input.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LINES = Array.from({ length: 2000 }, (_, i) => `{"k":${i}}\n`);

describe('replayableInput', () => {
  it('reads a regular file again from its start', async () => {
    const path = join(dir, 'rows.jsonl');
    writeFileSync(path, LINES.join(''));
    const input = await replayableInput(path, Readable.from([]), true);
    expect(await text(input.open())).toBe(LINES.join(''));
    expect(await text(input.open())).toBe(LINES.join(''));
    await input.close();
    expect(existsSync(path)).toBe(true);
  });

  it('spools stdin on its first read and replays the copy; close removes it', async () => {
    const input = await replayableInput(undefined, Readable.from(LINES), true);
    expect(await text(input.open())).toBe(LINES.join(''));
    expect(await text(input.open())).toBe(LINES.join(''));
    expect(await text(input.open())).toBe(LINES.join(''));
    await input.close();
    expect(() => input.open()).toThrow();
  });

  it('spools a named pipe given as --input', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const input = await replayableInput(fifo, Readable.from([]), true);
    const writer = new Promise<void>((resolve, reject) => {
      import('node:fs')
        .then(({ createWriteStream }) => {
          const out = createWriteStream(fifo);
          out.on('error', reject);
          out.end(LINES.join(''), resolve);
        })
        .catch(reject);
    });
    expect(await text(input.open())).toBe(LINES.join(''));
    await writer;
    expect(await text(input.open())).toBe(LINES.join(''));
    await input.close();
  });

  it('refuses a second read of stdin that was not spooled, or not read to its end', async () => {
    const plain = await replayableInput(undefined, Readable.from(LINES), false);
    await text(plain.open());
    expect(() => plain.open()).toThrow(/cannot be read again/);

    const partial = await replayableInput(undefined, Readable.from(LINES), true);
    const first = partial.open();
    for await (const _ of first) break; // stops reading after the first chunk
    expect(() => partial.open()).toThrow(/not read to its end/);
    await partial.close();
  });
});
