/**
 * A dynamic-bucket write whose bucket assignment read the hash index of a snapshot that expired
 * before its commit cannot tell whether its partitions were overwritten meanwhile: the commit is
 * refused (nothing visible) with a message saying what happened (the base snapshot expired, not an
 * overwrite), and `Table.append` re-plans by itself.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { DynamicBucketConflictError, expireSnapshots, FileSystemCatalog, openTable, type Table } from '../src/index.js';

let n = 0;
async function dynamicTable(): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dyn-expired-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '-1', 'write-only': 'true' },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

describe('dynamic buckets: the base of the bucket assignment expired', () => {
  it('is refused naming the expiration, not an overwrite; nothing is visible', async () => {
    const t = await dynamicTable();
    await t.append([{ k: 1, v: 'a' }]);
    const writer = t.newBatchWrite();
    await writer.write([{ k: 2, v: 'b' }]); // assigned against snapshot 1
    for (const k of [3, 4]) await t.append([{ k, v: 'c' }]);
    await expireSnapshots(t, { retainMin: 1, retainMax: 1 });
    expect(await t.snapshotManager.earliestId()).toBe(3);
    const messages = await writer.prepareCommit();
    const refused = t.newCommit().commit({ messages });
    await expect(refused).rejects.toBeInstanceOf(DynamicBucketConflictError);
    await expect(refused).rejects.toThrow(
      /snapshot 1, whose hash index the bucket assignment of this commit read, expired before the commit \(earliest snapshot now 3\)/,
    );
    await expect(refused).rejects.not.toThrow(/this commit writes were overwritten after/);
    await writer.close();
    expect(await t.snapshotManager.latestId()).toBe(3);
  });
});
