/**
 * What the automatic-tag suites share: a table of one INT column on an in-memory store, commits
 * stamped by a clock the test moves (with the after-commit jobs, or bare), and June 2024 times.
 */
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileStoreCommit, FileSystemCatalog, type Table, type TableCommit } from '../src/index.js';

let n = 0;

/** A table `id INT` with `options` on an in-memory store (or on `fileIO`). */
export async function autoTagTable(options: Record<string, string>, fileIO: FileIO = new MemoryFileIO()): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://auto-tags-${process.pid}-${++n}/wh`, { fileIO });
  await catalog.createTable('db.t', { fields: [{ name: 'id', type: 'INT' }], options });
  return catalog.getTable('db.t');
}

/** Commits one row at `time` without the after-commit jobs (a process killed right after its snapshot). */
export async function bareCommit(t: Table, time: number, identifier: bigint): Promise<number> {
  const w = t.newBatchWrite();
  await w.write([{ id: Number(identifier) }]);
  const r = await new FileStoreCommit(t.context, { now: () => time }).commit(
    { identifier, messages: await w.prepareCommit() },
    { commitUser: 'bare' },
  );
  await w.close();
  if (r.status !== 'committed') throw new Error(r.status);
  return r.snapshotId;
}

/** Local wall-clock time of June 2024 as epoch milliseconds. */
export const at = (day: number, hour: number, minute = 0): number => new Date(2024, 5, day, hour, minute).getTime();

/** A committer whose snapshots are stamped by a clock the test moves (batch: the batch identifier). */
export class Clocked {
  now = 0;
  readonly commit: TableCommit;
  constructor(
    readonly table: Table,
    private readonly batch = false,
    private id = 0n,
    commitUser = 'sink',
  ) {
    this.commit = table.newCommit({ commitUser, now: () => this.now });
  }

  /** Commits one row at `time`; returns the snapshot id. */
  async commitAt(time: number, extra: { watermark?: bigint } = {}): Promise<number> {
    this.now = time;
    const w = this.table.newBatchWrite();
    await w.write([{ id: Number(++this.id) }]);
    const messages = await w.prepareCommit();
    await w.close();
    const r = await this.commit.commit({ ...(this.batch ? {} : { identifier: this.id }), messages, ...extra });
    if (r.status !== 'committed') throw new Error(`not committed: ${r.status}`);
    return r.snapshotId;
  }
}
