/**
 * Sequence numbers of primary-key buckets after compactions that drop records, on local disk and
 * on the real S3 server. A pipeline commits through one long-lived committer (as the sink does)
 * while each checkpoint's writer starts fresh from the live files (as the sink's writers do after
 * a restart or a dropped compaction). Retractions and deletion vectors make compactions drop the
 * record holding a bucket's highest number; no checkpoint may then be re-sequenced or lose its
 * compaction, and where a compaction output remains, every new file's numbers lie above every
 * number committed to its bucket before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { readManifestEntries, readManifestList, type DataFileMeta } from '@tidemark/format';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { seededRandom as rng } from './support/seeded-random.mjs';

/** Keys that are never deleted: no bucket is ever emptied, so a compaction always has an output. */
const KEPT = 6;
const KEYS = 16;

const cases: Array<[string, Record<string, string>]> = [
  ['full compaction at every commit', { 'full-compaction.delta-commits': '1' }],
  ['deletion vectors', { 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '2' }],
];

/** Per bucket, the sequence ranges of the files each snapshot added, in snapshot order. */
async function addedRanges(table: Table): Promise<Array<{ kind: string; files: Array<{ bucket: number; file: DataFileMeta }> }>> {
  const out = [];
  for await (const s of table.snapshotManager.iterateForward()) {
    const files = [];
    for (const m of await readManifestList(table.fileIO, table.paths.manifestPath(s.deltaManifestList))) {
      for await (const e of readManifestEntries(table.fileIO, table.paths.manifestPath(m.fileName))) {
        if (e.kind === 'ADD') files.push({ bucket: e.bucket, file: e.file });
      }
    }
    out.push({ kind: s.commitKind, files });
  }
  return out;
}

for (const backend of storageBackends('compaction sequence maximum')) {
  describe.skipIf(!backend.available)(`compactions that drop a bucket's highest sequence number (${backend.name})`, () => {
    const warehouses: BackendWarehouse[] = [];
    afterAll(async () => {
      for (const w of warehouses) await w.cleanup();
    });

    it.each(cases)('%s: fresh writers continue without re-sequencing, and the table holds the model', async (name, options) => {
      const wh = await backend.open();
      warehouses.push(wh);
      const catalog = new FileSystemCatalog(wh.root, { fileIO: wh.io });
      const id = `db.t${cases.findIndex((c) => c[0] === name)}`;
      await catalog.createTable(id, {
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        primaryKeys: ['k'],
        options: { bucket: '2', ...options },
      });
      const table = await openTable(catalog.tableLocation(id), { fileIO: wh.io });
      const commit = table.newCommit({ commitUser: 'pipeline' });
      const rand = rng(20261202);
      const model = new Map<number, string>();
      for (let k = 0; k < KEYS; k++) model.set(k, `v0-${k}`);
      const rowsOf = (m: Map<number, string>) => [...m].map(([k, v]) => JSON.stringify({ k, v })).sort();

      for (let c = 0; c <= 10; c++) {
        const rows: Array<{ k: number; v?: string; kind: string }> = [];
        if (c === 0) {
          for (const [k, v] of model) rows.push({ k, v, kind: '+I' });
        } else {
          // Every third checkpoint only retracts: its level-0 files hold nothing else.
          const retractOnly = c % 3 === 0;
          for (let i = 0; i < 5; i++) {
            const k = Math.floor(rand() * KEYS);
            if (rows.some((r) => r.k === k)) continue;
            if (k >= KEPT && (retractOnly || rand() < 0.4)) {
              if (!model.has(k)) continue;
              rows.push({ k, kind: '-D' });
              model.delete(k);
            } else if (!retractOnly) {
              const v = `v${c}-${k}`;
              rows.push({ k, v, kind: '+I' });
              model.set(k, v);
            }
          }
          // The last retraction holds the checkpoint's highest number.
          if (!retractOnly) {
            const k = [...model.keys()].find((x) => x >= KEPT && !rows.some((r) => r.k === x));
            if (k !== undefined) {
              rows.push({ k, kind: '-D' });
              model.delete(k);
            }
          }
        }
        const w = table.newBatchWrite({ rowKindField: 'kind' });
        await w.write(rows);
        const messages = await w.prepareCommit();
        await w.close();
        const result = await commit.commit({ identifier: BigInt(c + 1), messages });
        expect(result.status, `checkpoint ${c}`).toBe('committed');
        if (result.status !== 'committed') continue;
        expect(result.resequencedFiles, `checkpoint ${c} re-sequenced files`).toBeUndefined();
        expect(result.compactionDropped, `checkpoint ${c} dropped its compaction`).toBeUndefined();
        // Both variants compact level 0 at every commit: batch reads see every checkpoint.
        expect(
          (await table.newRead().plan()).files().every((f) => f.level > 0),
          `checkpoint ${c} left level 0`,
        ).toBe(true);
        expect(
          await (async () =>
            (await table.newRead().toArrowTable())
              .toArray()
              .map((r) => JSON.stringify(r.toJSON()))
              .sort())(),
        ).toEqual(rowsOf(model));
      }

      // Every APPEND's files lie above every number committed to their bucket before them, but
      // where a compaction dropped all its records (a deletion-vector level-0 file of retractions
      // only): then the number after the live maximum may be one committed before, as with Java.
      const history = await addedRanges(table);
      const committed = new Map<number, bigint>();
      let reused = 0;
      for (const s of history) {
        for (const { bucket, file } of s.files) {
          const before = committed.get(bucket);
          if (s.kind === 'APPEND' && before !== undefined && file.minSequenceNumber <= before) reused++;
        }
        for (const { bucket, file } of s.files) {
          if ((committed.get(bucket) ?? -1n) < file.maxSequenceNumber) committed.set(bucket, file.maxSequenceNumber);
        }
      }
      if (options['deletion-vectors.enabled'] === undefined) expect(reused).toBe(0);
      // Live maxima never fall below what was committed: every bucket's highest number is kept.
      const live = new Map<number, bigint>();
      const plan = await table.newRead().plan();
      for (const split of plan.splits) {
        for (const f of split.files) {
          if ((live.get(split.bucket) ?? -1n) < f.meta.maxSequenceNumber) live.set(split.bucket, f.meta.maxSequenceNumber);
        }
      }
      expect(live.size).toBe(2);
      if (options['deletion-vectors.enabled'] === undefined) expect(live).toEqual(committed);
    });
  });
}
