/**
 * `TableWriteOptions.onCompaction`: a primary-key writer reports each compaction its buckets
 * finished (partition, bucket, duration, full or not, files in and out), which is what the
 * sink's compaction-duration metric is made of; a listener that throws changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type BucketCompactionReport, type CommitMessage, type Table } from '../src/index.js';

let n = 0;
async function pkTable(options: Record<string, string>): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://pk-writer-report-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

/** Three commits of one long-lived writer over keys 0..9 (both buckets each time). */
async function threeCommits(table: Table, onCompaction: (r: BucketCompactionReport) => void): Promise<CommitMessage[][]> {
  const writer = table.newBatchWrite({ onCompaction });
  const commit = table.newCommit({ commitUser: 'report' });
  const out: CommitMessage[][] = [];
  try {
    for (let c = 1; c <= 3; c++) {
      await writer.write(Array.from({ length: 10 }, (_, k) => ({ k, v: `c${c}-${k}` })));
      const messages = await writer.prepareCommit();
      const result = await commit.commit({ identifier: BigInt(c), messages });
      expect(result.status).toBe('committed');
      out.push(messages);
    }
  } finally {
    await writer.close();
  }
  return out;
}

describe('a writer reports the compactions of its buckets', () => {
  it('full compactions at every commit: one report per bucket and commit, matching what the commit carries', async () => {
    const table = await pkTable({ 'full-compaction.delta-commits': '1' });
    const reports: BucketCompactionReport[] = [];
    const commits = await threeCommits(table, (r) => reports.push(r));
    const compacted = commits.flat().filter((m) => (m.compactBefore?.length ?? 0) + (m.compactAfter?.length ?? 0) > 0);
    // Each commit compacts both buckets once, fully, into the top level (num-levels defaults to the compaction trigger + 1 = 6: level 5).
    expect(compacted).toHaveLength(6);
    expect(reports).toHaveLength(6);
    expect(new Set(reports.map((r) => r.bucket))).toEqual(new Set([0, 1]));
    for (const r of reports) {
      expect(r.full).toBe(true);
      expect(r.outputLevel).toBe(5);
      expect(Number.isFinite(r.durationMs) && r.durationMs >= 0).toBe(true);
      expect(r.partition).toBeInstanceOf(Uint8Array);
    }
    // Nothing compacted twice within a commit here: the reports' files are the commits' files.
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    expect(sum(reports.map((r) => r.filesBefore))).toBe(sum(compacted.map((m) => m.compactBefore!.length)));
    expect(sum(reports.map((r) => r.filesAfter))).toBe(sum(compacted.map((m) => m.compactAfter!.length)));
  });

  it('deletion-vector tables compact level 0 at each commit (not full); a listener that throws changes nothing', async () => {
    const table = await pkTable({ 'deletion-vectors.enabled': 'true' });
    let calls = 0;
    const commits = await threeCommits(table, (r) => {
      calls++;
      expect(r.full).toBe(false);
      throw new Error('a broken metrics listener');
    });
    expect(calls).toBeGreaterThanOrEqual(6);
    expect(commits.flat().filter((m) => (m.compactAfter?.length ?? 0) > 0)).toHaveLength(6);
    const rows = (await table.newRead().toArrowTable()).toArray().map((r) => `${r.k}:${r.v}`);
    expect(rows.sort()).toEqual(Array.from({ length: 10 }, (_, k) => `${k}:c3-${k}`).sort());
  });

  it('without a listener nothing changes (the default of every writer)', async () => {
    const table = await pkTable({ 'full-compaction.delta-commits': '1' });
    const writer = table.newBatchWrite();
    await writer.write([{ k: 1, v: 'a' }]);
    const [m] = (await writer.prepareCommit()).filter((x) => (x.compactAfter?.length ?? 0) > 0);
    await writer.close();
    expect(m?.compactAfter).toHaveLength(1);
  });
});
