import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryFileIO, StorageConfigError } from '../src/index.js';
import { describeFileIOBehaviour } from './fileio-behaviour.js';

const storeName = `unit-${randomUUID()}`;
afterAll(() => MemoryFileIO.clear(storeName));

describeFileIOBehaviour(
  'MemoryFileIO',
  () => new MemoryFileIO(),
  () => `memory://${storeName}/${randomUUID()}`,
);

describe('MemoryFileIO specifics', () => {
  it('shares objects between instances with the same store name, not across names', async () => {
    const a = new MemoryFileIO();
    const b = new MemoryFileIO();
    await a.write(`memory://${storeName}/shared/k`, 'v');
    expect(new TextDecoder().decode(await b.read(`memory://${storeName}/shared/k`))).toBe('v');
    expect(await b.exists(`memory://other-${storeName}/shared/k`)).toBe(false);
  });

  it('stores a copy of the caller buffer', async () => {
    const io = new MemoryFileIO();
    const buf = new Uint8Array([1, 2, 3]);
    await io.write(`memory://${storeName}/copy`, buf);
    buf[0] = 9;
    expect([...(await io.read(`memory://${storeName}/copy`))]).toEqual([1, 2, 3]);
  });

  it('sets lastModified on write', async () => {
    const io = new MemoryFileIO();
    const p = `memory://${storeName}/mtime`;
    await io.write(p, 'a');
    const t1 = (await io.stat(p)).lastModified.getTime();
    await new Promise((r) => setTimeout(r, 5));
    await io.write(p, 'b');
    expect((await io.stat(p)).lastModified.getTime()).toBeGreaterThan(t1);
  });

  it('rejects non-memory locations', async () => {
    await expect(new MemoryFileIO().read('/tmp/x')).rejects.toBeInstanceOf(StorageConfigError);
  });
});
