/**
 * A parallel sink into a dynamic-bucket primary-key table (`bucket` = -1), on local disk and on the
 * real S3 server. The pipeline's one bucket assigner places each key before the record is routed,
 * and records go to writers by (partition, assigned bucket), so:
 * - no bucket of a checkpoint is written by two writers (its APPEND and COMPACT files all carry one
 *   writer's file-name uuid), while several writers share the work;
 * - the writers compact their buckets: COMPACT snapshots follow the checkpoints' APPEND ones and
 *   level 0 stays bounded per bucket;
 * - the table equals a serial model of the source (last write per key, deletes applied) at every
 *   checkpoint, and its hash index names each key once, in the bucket its data lives in.
 */
import { describe, expect, it } from 'vitest';
import { liveEntries, openTable, type Table } from '@tidemark/core';
import { INDEX_TYPE_HASH, decodeHashIndex, deserializeBinaryRow, keyHash, parseTypeString, readIndexManifest } from '@tidemark/format';
import { storageBackends } from './support/backends.js';
import { arraySource, ingestCollectingCheckpoints } from './support/sink-runs.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { upsertWorkload } from './support/upsert-workload.js';
import { deltaEntries } from './support/manifest-entries.js';
import { columns } from './support/table-definitions.mjs';

type Op = { dt: string; k: number; v: string | null; op: '+I' | '+U' | '-D' };

const STRING = parseTypeString('STRING NOT NULL');
const INT = parseTypeString('INT NOT NULL');

/** `n` upserts and deletes of `keys` keys over two partitions (`dt` = p0/p1 by key parity); every version distinct. */
function workload(n: number, keys: number, seed: number): Op[] {
  return upsertWorkload(n, keys, seed).map((o) => ({ dt: `p${o.k % 2}`, ...o }));
}

/** The table a serial application of the first `upTo` records gives, as sorted `dt/k=v` strings. */
function model(ops: readonly Op[], upTo: number): string[] {
  const m = new Map<string, string>();
  for (const o of ops.slice(0, upTo)) {
    if (o.op === '-D') m.delete(`${o.dt}/${o.k}`);
    else m.set(`${o.dt}/${o.k}`, o.v!);
  }
  return [...m].map(([k, v]) => `${k}=${v}`).sort();
}

async function rowsAt(t: Table, snapshotId: number): Promise<string[]> {
  return (await t.newRead({ snapshotId }).toArrowTable())
    .toArray()
    .map((r) => {
      const o = r.toJSON() as { dt: string; k: number; v: string };
      return `${o.dt}/${o.k}=${o.v}`;
    })
    .sort();
}

const slotOf = (partition: Uint8Array, bucket: number): string => `${String(deserializeBinaryRow(partition, [STRING])[0])}/${bucket}`;

/** The writer of a data file: every file name of one table writer starts with `data-<its uuid>-`. */
function writerOf(fileName: string): string {
  const m = /^data-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-/.exec(fileName);
  expect(m, fileName).not.toBeNull();
  return m![1]!;
}

/** Writers of each (partition, bucket) among the files `snapshotId` added. */
async function writersBySlot(t: Table, snapshotId: number): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const e of await deltaEntries(t, snapshotId)) {
    if (e.kind !== 'ADD') continue;
    const slot = slotOf(e.partition, e.bucket);
    const set = out.get(slot) ?? new Set<string>();
    set.add(writerOf(e.file.fileName));
    out.set(slot, set);
  }
  return out;
}

/** Level-0 data files of each (partition, bucket) live at `snapshotId`. */
async function levelZeroBySlot(t: Table, snapshotId: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of (await liveEntries(t.fileIO, t.paths, await t.snapshotManager.snapshot(snapshotId))).values()) {
    const slot = slotOf(e.partition, e.bucket);
    out.set(slot, (out.get(slot) ?? 0) + (e.file.level === 0 ? 1 : 0));
  }
  return out;
}

describe.each(storageBackends('sink dynamic bucket compaction'))('parallel sink into a dynamic-bucket table on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);
    let n = 0;

    // Hang guard: 12 checkpoints × (2 snapshots + reads) took up to 56 s on S3 beside other test runs.
    it.each([2, 4])(
      'parallelism %i: one writer per bucket, compaction, the serial model at every checkpoint',
      async (parallelism) => {
        const name = `db.t${++n}`;
        await env.catalog.createTable(name, {
          fields: columns('dt STRING NOT NULL', 'k INT NOT NULL', 'v STRING'),
          partitionKeys: ['dt'],
          primaryKeys: ['dt', 'k'],
          options: {
            bucket: '-1',
            // 24 keys per partition in buckets of 8: three buckets each, six in all.
            'dynamic-bucket.target-row-num': '8',
            'num-sorted-run.compaction-trigger': '3',
            // Every snapshot kept, so the table can be read at every checkpoint.
            'snapshot.num-retained.min': '1000',
            'snapshot.num-retained.max': '1000',
          },
        });
        const t = await openTable(env.catalog.tableLocation(name), { fileIO: env.wh.io });
        const ops = workload(240, 48, 10 + parallelism);
        const { summary, infos } = await ingestCollectingCheckpoints({
          table: t.location,
          fileIO: env.wh.io,
          source: arraySource(ops, 'ops:dyn'),
          checkpointEvery: 20,
          parallelism,
          rowKindField: 'op',
        });
        expect(summary).toMatchObject({ status: 'source-done', records: 240, checkpoints: 12 });

        const allWriters = new Set<string>();
        let compacts = 0;
        for (const info of infos) {
          const r = info.commits[0]!.result;
          expect(r.status, `checkpoint ${info.checkpointId}`).toBe('committed');
          if (r.status !== 'committed') continue;
          // (a) each snapshot of the checkpoint (APPEND, then COMPACT when the writers compacted):
          // every bucket's new files come from one writer.
          for (const id of r.snapshotIds) {
            for (const [slot, writers] of await writersBySlot(t, id)) {
              expect(writers.size, `writers of bucket ${slot} in snapshot ${id} (checkpoint ${info.checkpointId})`).toBe(1);
              for (const w of writers) allWriters.add(w);
            }
            if ((await t.snapshotManager.snapshot(id)).commitKind === 'COMPACT') compacts++;
          }
          // (c) the table at the checkpoint equals the serial model of the source up to its offset.
          const last = r.snapshotIds[r.snapshotIds.length - 1]!;
          expect(await rowsAt(t, last), `snapshot ${last} (offset ${String(info.offset)})`).toEqual(model(ops, info.offset as number));
          // (b) universal compaction forces a pick once a bucket has more sorted runs than the trigger
          // (3), and the commit waits for it: a bucket never keeps more than three level-0 files.
          for (const [slot, files] of await levelZeroBySlot(t, last)) {
            expect(files, `level-0 files of bucket ${slot} at snapshot ${last}`).toBeLessThanOrEqual(3);
          }
        }
        expect(allWriters.size, 'table writers that wrote data').toBe(parallelism);
        // (b) 12 checkpoints over six buckets: the writers compacted, in COMPACT snapshots.
        expect(compacts).toBeGreaterThanOrEqual(3);

        // The hash index: one HASH file per bucket, each key hash once, in the bucket its data lives in.
        const latest = (await t.snapshotManager.latest())!;
        const indexed = new Map<string, Set<number>>();
        for (const e of await readIndexManifest(t.fileIO, t.paths.manifestPath(latest.indexManifest!))) {
          if (e.indexType !== INDEX_TYPE_HASH) continue;
          const slot = slotOf(e.partition, e.bucket);
          expect(indexed.has(slot), `one hash index file for bucket ${slot}`).toBe(false);
          const path = t.paths.indexFilePath(e.fileName);
          indexed.set(slot, new Set(decodeHashIndex(await t.fileIO.read(path), path, e.rowCount)));
        }
        const everInserted = new Set(ops.map((o) => `${o.dt}/${o.k}`));
        expect(
          [...indexed.values()].reduce((s, h) => s + h.size, 0),
          'indexed key hashes',
        ).toBe(everInserted.size);
        expect(indexed.size).toBe(6);
        for (const slot of indexed.keys()) {
          const [dt, bucket] = slot.split('/');
          const rows = (await t.newRead({ bucket: Number(bucket), partition: { dt: dt! } }).toArrowTable()).toArray();
          for (const r of rows) {
            const k = (r.toJSON() as { k: number }).k;
            expect(indexed.get(slot)!.has(keyHash([INT], [k])), `key ${dt}/${k} indexed in bucket ${slot}`).toBe(true);
          }
        }
      },
      240_000,
    );
  });
});
