import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { buildInitialSchema, openTable, readDataFile } from '@tidemark/core';
import { decodeHashIndex, keyHash, parseTypeString, readIndexManifest, serializeSchema } from '@tidemark/format';
import { FileIOCheckpointStore, runIngest, type ReplayableSource, type SourceOffset, type SourceRecord } from '../src/index.js';

/** Upserts of keys 0..keys-1 in rounds: record i sets key i % keys to `r<round>`. */
class UpsertSource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  readonly id = 'upserts:test';
  constructor(
    readonly n: number,
    readonly keys: number,
  ) {}
  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) {
      yield { value: { k: i % this.keys, v: `r${Math.floor(i / this.keys)}` }, offset: i + 1 };
    }
  }
}

describe('runIngest into a dynamic-bucket primary-key table', () => {
  it('several writers over several checkpoints: latest values, one bucket per key, an index matching the data', async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn-${randomBytes(6).toString('hex')}/db.db/t`;
    const schema = buildInitialSchema(
      {
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        primaryKeys: ['k'],
        options: { 'dynamic-bucket.target-row-num': '4' },
      },
      1,
    );
    await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
    const keys = 25;
    const s = await runIngest({
      table: location,
      fileIO: io,
      source: new UpsertSource(keys * 4, keys),
      stateStore: new FileIOCheckpointStore(io, `${location}-state`),
      checkpointEvery: 30,
      parallelism: 3,
    });
    expect(s.status).toBe('source-done');

    const table = await openTable(location, { fileIO: io });
    const read = (await table.newRead().toArrowTable()).toArray().map((r: { k: number; v: string }) => [r.k, r.v] as const);
    expect(read.length).toBe(keys);
    expect(new Map(read)).toEqual(new Map(Array.from({ length: keys }, (_, k) => [k, 'r3'] as const)));

    const bucketOf = new Map<number, number>();
    for (const split of (await table.newRead().plan()).splits) {
      for (const f of split.files) {
        for await (const b of readDataFile(io, { path: f.path, schema: table.schema() }, table.schema().fields, { keyValue: true })) {
          for (let i = 0; i < b.batch.numRows; i++) {
            const k = b.batch.getChild('k')!.get(i) as number;
            expect(bucketOf.get(k) ?? split.bucket, `key ${k}`).toBe(split.bucket);
            bucketOf.set(k, split.bucket);
          }
        }
      }
    }
    const latest = (await table.snapshotManager.latest())!;
    const indexed = new Map<number, number>();
    for (const e of await readIndexManifest(io, table.context.paths.manifestPath(latest.indexManifest!))) {
      const path = table.context.paths.indexFilePath(e.fileName);
      for (const h of decodeHashIndex(await io.read(path), path, e.rowCount)) {
        expect(indexed.has(h)).toBe(false);
        indexed.set(h, e.bucket);
      }
    }
    expect(indexed.size).toBe(keys);
    const INT = [parseTypeString('INT NOT NULL')];
    for (const [k, b] of bucketOf) expect(indexed.get(keyHash(INT, [k])), `key ${k}`).toBe(b);
    // The writers share one assigner: buckets fill to target-row-num (4) across them.
    expect(new Set(bucketOf.values()).size).toBe(Math.ceil(keys / 4));
  });
});
