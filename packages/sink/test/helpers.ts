import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { buildInitialSchema, openTable, readDataFile, type Table } from '@tidemark/core';
import { decodeHashIndex, keyHash, parseTypeString, readIndexManifest, serializeSchema, type TableSchema } from '@tidemark/format';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import type { ReplayableSource, SourceOffset, SourceRecord } from '../src/index.js';

export const spec = {
  fields: [
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'v', type: 'STRING' },
  ],
  options: { bucket: '-1', 'file.format': 'parquet' },
};

/** A fresh memory table; returns its FileIO, location and schema. */
export async function memoryTable(name = 't'): Promise<{ io: FileIO; location: string; schema: TableSchema }> {
  const io = new MemoryFileIO();
  const location = `memory://sink-${randomBytes(6).toString('hex')}/db.db/${name}`;
  const schema = buildInitialSchema(spec, 1_000 + Math.floor(Math.random() * 1e9));
  await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
  return { io, location, schema };
}

export function rows(from: number, to: number): Array<{ id: number; v: string }> {
  const out: Array<{ id: number; v: string }> = [];
  for (let i = from; i < to; i++) out.push({ id: i, v: `v${i}` });
  return out;
}

/** The table's ids (sorted) at the latest snapshot. */
export async function tableIds(io: FileIO, location: string): Promise<number[]> {
  const t = await openTable(location, { fileIO: io });
  if ((await t.snapshotManager.latestId()) === null) return [];
  const data = await t.newRead().toArrowTable();
  const ids = data.getChild('id')!;
  const out: number[] = [];
  for (let i = 0; i < data.numRows; i++) out.push(Number(ids.get(i)));
  return out.sort((a, b) => a - b);
}

/** An in-memory replayable source of `n` rows; offset = index of the next record. */
export class ArraySource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  opened: SourceOffset[] = [];
  constructor(
    readonly n: number,
    readonly id = 'array:test',
  ) {}
  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    this.opened.push(from);
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) yield { value: { id: i, v: `v${i}` }, offset: i + 1 };
  }
}

/** Thrown by the test crash hook in place of SIGKILL. */
export class SimulatedCrash extends Error {}

/** Writes schema 0 of a dynamic-bucket primary-key table `k INT NOT NULL, v STRING` with buckets of 4 keys at `location`. */
export async function createDynamicBucketTable(io: FileIO, location: string): Promise<void> {
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
}

/**
 * The bucket of each key `k` in the data files of the table's latest snapshot, failing when a key's
 * records live in two buckets.
 */
export async function bucketOfKeys(io: FileIO, table: Table): Promise<Map<number, number>> {
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
  return bucketOf;
}

/**
 * The bucket of each key hash in the latest snapshot's hash index; with `unique`, fails on a hash
 * indexed twice.
 */
export async function indexedBuckets(io: FileIO, table: Table, options: { unique?: boolean } = {}): Promise<Map<number, number>> {
  const latest = (await table.snapshotManager.latest())!;
  const indexed = new Map<number, number>();
  for (const e of await readIndexManifest(io, table.context.paths.manifestPath(latest.indexManifest!))) {
    const path = table.context.paths.indexFilePath(e.fileName);
    for (const h of decodeHashIndex(await io.read(path), path, e.rowCount)) {
      if (options.unique) expect(indexed.has(h)).toBe(false);
      indexed.set(h, e.bucket);
    }
  }
  return indexed;
}

/** Every key's hash is indexed in the bucket its data lives in. */
export function expectIndexedWhereStored(bucketOf: ReadonlyMap<number, number>, indexed: ReadonlyMap<number, number>): void {
  const INT = [parseTypeString('INT NOT NULL')];
  for (const [k, b] of bucketOf) expect(indexed.get(keyHash(INT, [k])), `key ${k}`).toBe(b);
}

/** Files written in fresh temporary directories; `cleanup` (for afterAll) removes them all. */
export function tempFiles(prefix: string): { file(name: string, text: string): Promise<string>; cleanup(): Promise<void> } {
  const dirs: string[] = [];
  return {
    async file(name, text) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    },
    async cleanup() {
      for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
    },
  };
}

/**
 * A primary-key table `id BIGINT NOT NULL, v STRING` with deletion vectors in memory: its writers
 * compact level 0 away at every checkpoint.
 */
export async function pkDvTable(location: string, buckets: number): Promise<{ io: MemoryFileIO; location: string }> {
  const io = new MemoryFileIO();
  const schema = buildInitialSchema(
    { ...spec, primaryKeys: ['id'], options: { bucket: String(buckets), 'deletion-vectors.enabled': 'true' } },
    1,
  );
  await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
  return { io, location };
}

/** The samples of a Prometheus text exposition, by `name{labels}`. */
export function promSamples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}
