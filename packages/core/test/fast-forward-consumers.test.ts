/**
 * Fast-forward and stream consumers of the target branch: the branch's snapshots take the
 * replaced ids, so a consumer whose next snapshot lay past the fork skipped them (it waited for an
 * id the branch's history had already used). It is moved back to the first snapshot that differs.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { ConsumerManager, FileSystemCatalog, Table } from '../src/index.js';

let n = 0;

async function changes(t: Table, consumerId: string): Promise<string[]> {
  const out: string[] = [];
  const to = (await t.snapshotManager.latestId())!;
  for await (const b of t.newStreamRead({ consumerId, to, pollIntervalMs: 10 })) {
    for (const r of b.batch.toArray()) out.push(`${String(r._row_kind)}${String(r.id)}:${String(r.v)}`);
  }
  return out;
}

describe('fast-forward and stream consumers', () => {
  it("moves the target's consumers past the fork back to it: they read the branch's snapshots", async () => {
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://fast-forward-consumers-${process.pid}-${++n}/wh`, { fileIO: io });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['id'],
      options: { bucket: '1' },
    });
    const loc = catalog.tableLocation('db.t');
    const main = await Table.open(loc, { fileIO: io });
    await main.append([{ id: 1, v: 'a' }], { expire: false });
    await main.createTag('t1');
    await main.append([{ id: 2, v: 'main' }], { expire: false });
    await main.append([{ id: 3, v: 'main' }], { expire: false });
    // A reader of main consumed snapshots 1..3.
    expect(await changes(main, 'reader')).toEqual(['+I1:a', '+I2:main', '+I3:main']);
    const consumers = new ConsumerManager(io, main.paths);
    expect(await consumers.nextSnapshot('reader')).toBe(4);

    await main.branches().create('dev', { tag: 't1' });
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev.append([{ id: 20, v: 'dev' }], { expire: false });
    await dev.append([{ id: 30, v: 'dev' }], { expire: false });
    await dev.append([{ id: 40, v: 'dev' }], { expire: false });

    const dry = await main.branches().fastForward('dev', { dryRun: true });
    expect(dry.movedConsumers).toEqual(['reader']);
    expect(await consumers.nextSnapshot('reader')).toBe(4);
    const r = await main.branches().fastForward('dev');
    expect(r.movedConsumers).toEqual(['reader']);
    // Snapshot 1 is the tag's, the same file on both sides: the reader resumes after it.
    expect(await consumers.nextSnapshot('reader')).toBe(2);
    expect(await changes(await Table.open(loc, { fileIO: io }), 'reader')).toEqual(['+I20:dev', '+I30:dev', '+I40:dev']);
  });
});
