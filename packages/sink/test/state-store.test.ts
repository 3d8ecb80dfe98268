import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileIOCheckpointStore, LocalDirCheckpointStore, SinkUsageError, openCheckpointStore, type CheckpointState } from '../src/index.js';

function state(id: bigint): CheckpointState {
  return {
    version: 1,
    checkpointId: id,
    table: { location: '/t', fingerprint: 'f'.repeat(32) },
    commitUser: 'user-1',
    source: { id: 'src', offset: { p0: 12 }, done: false },
    pending: [],
    createdAtMs: 1,
  };
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('checkpoint state stores', () => {
  it('saves each checkpoint once and returns the highest as latest', async () => {
    const store = new FileIOCheckpointStore(new MemoryFileIO(), 'memory://states/p1');
    expect(await store.latest()).toBeNull();
    await store.save(state(1n));
    await store.save(state(2n));
    expect((await store.latest())!.checkpointId).toBe(2n);
    expect((await store.latest())!.source.offset).toEqual({ p0: 12 });
    await expect(store.save(state(2n))).rejects.toThrow(SinkUsageError);
    expect(await store.highestId()).toBe(2n);
    await store.prune(2n);
    expect(await store.highestId()).toBe(2n);
    await store.save(state(10n));
    expect((await store.latest())!.checkpointId).toBe(10n);
  });

  it('skips an undecodable newest state with a warning and ignores temp files (local directory)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sink-state-'));
    dirs.push(dir);
    const warnings: string[] = [];
    const store = new LocalDirCheckpointStore(dir, { logger: { warn: (m) => warnings.push(m) } });
    await store.save(state(4n));
    await writeFile(join(dir, 'chk-5.json'), '{"version":1, "checkpointId": {"$bigint"');
    await writeFile(join(dir, '.chk-6.json.123.tmp'), 'partial');
    const latest = await store.latest();
    expect(latest!.checkpointId).toBe(4n);
    expect(warnings.join('\n')).toMatch(/chk-5\.json/);
    expect(await store.highestId()).toBe(5n);
    expect((await readdir(dir)).sort()).toEqual(['.chk-6.json.123.tmp', 'chk-4.json', 'chk-5.json']);
  });

  it('openCheckpointStore picks a local directory for paths and a FileIO store for URIs', () => {
    expect(openCheckpointStore('/tmp/x')).toBeInstanceOf(LocalDirCheckpointStore);
    const s = openCheckpointStore('memory://states/p2/');
    expect(s).toBeInstanceOf(FileIOCheckpointStore);
    expect(s).not.toBeInstanceOf(LocalDirCheckpointStore);
    expect(s.location).toBe('memory://states/p2');
  });
});
