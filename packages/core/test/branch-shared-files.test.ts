/**
 * Jobs that delete files on one branch keep what another branch still reads: rollback and
 * snapshot expiration on main after a branch was made from a tag, and on the branch past its fork.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, Table } from '../src/index.js';

let n = 0;

async function setup(): Promise<{ io: FileIO; loc: string }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://branch-shared-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    // Writers compact at every commit: later snapshots delete the files of earlier ones.
    options: { bucket: '1', 'full-compaction.delta-commits': '1' },
  });
  return { io, loc: catalog.tableLocation('db.t') };
}

async function rows(t: Table): Promise<unknown[]> {
  return (await t.newRead().toArrowTable()).toArray().map((r) => r.toJSON());
}

/** Every object under the table, to compare before and after. */
async function objects(io: FileIO, loc: string): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const st of io.list(loc)) out.add(st.path);
  return out;
}

describe('files shared by branches', () => {
  it("main's rollback past the tag a branch was made from keeps the branch's files", async () => {
    const { io, loc } = await setup();
    const main = await Table.open(loc, { fileIO: io });
    await main.append([{ id: 1, v: 'a' }], { expire: false });
    await main.append([{ id: 2, v: 'b' }], { expire: false });
    await main.createTag('t2');
    await main.branches().create('dev', { tag: 't2' });
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    const devRows = await rows(dev);
    expect(devRows).toHaveLength(2);
    // Snapshots 2-4 (each append is followed by a compaction) go; of the two files they added,
    // Java would also delete the compacted one the branch reads.
    const r = await main.rollbackTo(1, { force: true });
    expect(r).toMatchObject({ removedSnapshots: [4, 3, 2], removedTags: ['t2'], deletedDataFiles: 1 });
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([{ id: 1, v: 'a' }]);
    expect(await rows(await Table.open(loc, { fileIO: io, branch: 'dev' }))).toEqual(devRows);
  });

  it("a branch's rollback deletes what only the branch wrote", async () => {
    const { io, loc } = await setup();
    const main = await Table.open(loc, { fileIO: io });
    await main.append([{ id: 1, v: 'a' }], { expire: false });
    await main.createTag('t1');
    await main.branches().create('dev', { tag: 't1' });
    const before = await objects(io, loc);
    const dev = await Table.open(loc, { fileIO: io, branch: 'dev' });
    await dev.append([{ id: 1, v: 'A' }], { expire: false });
    const r = await dev.rollbackTo('t1');
    expect(r.deletedDataFiles).toBeGreaterThan(0);
    const after = await objects(io, loc);
    // Every file main had is still there; what the branch wrote is gone again.
    for (const p of before) expect(after.has(p), p).toBe(true);
    expect([...after].filter((p) => p.endsWith('.parquet') && !before.has(p))).toEqual([]);
    expect(await rows(await Table.open(loc, { fileIO: io }))).toEqual([{ id: 1, v: 'a' }]);
  });
});
