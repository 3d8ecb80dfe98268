/**
 * Two one-shot writes upserting the same keys of a deletion-vector table at once. The one that
 * commits second has its files re-sequenced above the first's, which drops its compaction (it
 * merged its records at their old sequence numbers); its rows then sit in level 0, invisible to
 * batch reads. A write that returns must have its rows visible: it compacts those buckets again
 * from the latest snapshot and commits that as its COMPACT snapshot (with the changelog of a
 * `lookup` table), or fails.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER } from '@tidemark/format';
import {
  CommitConflictError,
  CompactionNotCommittedError,
  completeDroppedCompaction,
  FileSystemCatalog,
  openTable,
  type Table,
} from '../src/index.js';

/** `io` whose first create of a snapshot file first runs `before` to its end (the other writer wins the race). */
function losingFirstRace(io: FileIO, before: () => Promise<unknown>): FileIO {
  let raced = false;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'createIfAbsent') {
        return async (path: string, data: Uint8Array | string) => {
          if (!raced && /\/snapshot\/snapshot-\d+$/.test(path)) {
            raced = true;
            await before();
          }
          return target.createIfAbsent(path, data);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

let n = 0;
async function dvTable(options: Record<string, string>): Promise<{ location: string; io: MemoryFileIO }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dv-upsert-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', 'deletion-vectors.enabled': 'true', ...options },
  });
  return { location: catalog.tableLocation('db.t'), io };
}

const rows = (v: string): { k: number; v: string }[] => Array.from({ length: 50 }, (_, k) => ({ k, v }));

async function values(t: Table): Promise<string[]> {
  const data = await t.newRead().toArrowTable();
  return [...new Set(data.toArray().map((r) => r.v as string))].sort();
}

describe.each([
  ['deletion vectors', {}],
  ['deletion vectors with the lookup changelog', { 'changelog-producer': 'lookup' }],
])('concurrent one-shot upserts of the same keys (%s)', (_name, options) => {
  it('the write that commits second still has its rows visible when it returns', async () => {
    const { location, io } = await dvTable(options);
    const first = await openTable(location, { fileIO: io });
    await first.append(rows('base'));
    const winner = await openTable(location, { fileIO: io });
    const loser = await openTable(location, { fileIO: losingFirstRace(io, () => winner.append(rows('winner'))) });

    const result = await loser.append(rows('loser'));
    expect(result.status).toBe('committed');
    if (result.status !== 'committed') return;
    // Its APPEND was re-sequenced above the winner's, and it commits the compaction after all.
    expect(result.resequencedFiles).toBeGreaterThan(0);
    expect(result.compactionDropped).toBeUndefined();
    const last = await first.snapshotManager.snapshot(result.snapshotId);
    expect(last.commitKind).toBe('COMPACT');
    const reader = await openTable(location, { fileIO: io });
    expect(await values(reader)).toEqual(['loser']);
    expect((await reader.newRead().toArrowTable()).numRows).toBe(50);

    if ((options as Record<string, string>)['changelog-producer'] === 'lookup') {
      // The changelog holds the loser's update of every key: -U of the winner's value, +U of its own.
      const changes: string[] = [];
      const from = result.snapshotIds[0]!;
      for await (const c of reader.newStreamRead({ from, to: result.snapshotId })) {
        for (const r of c.batch.toArray()) changes.push(`${r._row_kind as string} ${r.v as string}`);
      }
      const counted = new Map<string, number>();
      for (const c of changes) counted.set(c, (counted.get(c) ?? 0) + 1);
      expect(Object.fromEntries(counted)).toEqual({ '-U winner': 50, '+U loser': 50 });
    }
  });
});

describe('completeDroppedCompaction', () => {
  it('fails, naming the committed snapshot and what to run, when the compaction keeps losing; deletes what it wrote', async () => {
    const { location, io } = await dvTable({});
    const table = await openTable(location, { fileIO: io });
    // A write whose compaction was dropped: only its APPEND part is committed, so level 0 holds its rows.
    const writer = table.newBatchWrite();
    await writer.write(rows('level-0'));
    const messages = await writer.prepareCommit();
    expect(messages.every((m) => (m.compactAfter?.length ?? 0) > 0)).toBe(true);
    const appendOnly = messages.map((m) => ({
      ...m,
      compactBefore: [],
      compactAfter: [],
      compactNewIndexFiles: [],
      compactDeletedIndexFiles: [],
    }));
    const committed = await table.newCommit().commit({ messages: appendOnly });
    await writer.close();
    expect(committed).toMatchObject({ status: 'committed', snapshotIds: [1] });
    expect((await table.newRead().toArrowTable()).numRows).toBe(0);
    const filesBefore = await listAll(io, location);
    let attempts = 0;
    const alwaysLoses = {
      commit: (): Promise<never> => {
        attempts++;
        return Promise.reject(new CommitConflictError('a concurrent compaction replaced the inputs'));
      },
    };
    const o = table.context.options;
    const retrying = {
      location: table.location,
      fileIO: table.fileIO,
      paths: table.paths,
      isPrimaryKeyTable: true,
      newBatchWrite: () => table.newBatchWrite(),
      context: {
        options: {
          deletionVectorsEnabled: true,
          changelogProducer: o.changelogProducer,
          writeOnly: false,
          commitMaxRetries: 2,
          commitMinRetryWaitMs: 1,
          commitMaxRetryWaitMs: 2,
        },
      },
    };
    const run = completeDroppedCompaction(
      retrying,
      alwaysLoses,
      { identifier: BATCH_COMMIT_IDENTIFIER, messages },
      {
        status: 'committed',
        snapshotId: 1,
        snapshotIds: [1],
        compactionDropped: 'dropped',
      },
    );
    await expect(run).rejects.toBeInstanceOf(CompactionNotCommittedError);
    await expect(run).rejects.toThrow(
      /snapshot 1 holds the write's rows, but its compaction lost to concurrent commits 3 times .*'tidemark compact'/,
    );
    expect(attempts).toBe(3);
    // Each attempt's compaction output was deleted again; only in-flight records come and go.
    expect((await listAll(io, location)).filter((f) => !f.includes('/inflight/'))).toEqual(
      filesBefore.filter((f) => !f.includes('/inflight/')),
    );
  });
});

async function listAll(io: FileIO, location: string): Promise<string[]> {
  const out: string[] = [];
  for await (const st of io.list(location, { recursive: true })) out.push(st.path);
  return out.sort();
}
