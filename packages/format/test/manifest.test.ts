import { APPENDIX_A_INDEX_MANIFEST, APPENDIX_A_MANIFEST, APPENDIX_A_MANIFEST_LIST } from './appendix-a.js';
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CorruptFileError, FormatError } from '../src/errors.js';
import { AVRO_CODEC_NAMES } from '../src/avro-codecs.js';
import { readAvroHeader, readAvroRecords, writeAvroFile, type AvroRecord } from '../src/avro-container.js';
import { INDEX_MANIFEST_ENTRY_SCHEMA, MANIFEST_ENTRY_SCHEMA, MANIFEST_FILE_META_SCHEMA } from '../src/manifest-schemas.js';
import {
  decodeManifestList,
  readManifestList,
  writeManifestList,
  writeManifestListTo,
  type ManifestFileMeta,
} from '../src/manifest-file-meta.js';
import {
  decodeManifestEntries,
  fileEntryIdentity,
  readManifestEntries,
  writeManifestFile,
  writeManifestFileTo,
  type ManifestEntry,
} from '../src/manifest-entry.js';
import { decodeIndexManifest, readIndexManifest, writeIndexManifest, type IndexManifestEntry } from '../src/index-manifest.js';
import { EMPTY_SIMPLE_STATS, type ManifestIO } from '../src/manifest-fields.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = join(REPO_ROOT, '../shared/fixtures/paimon');
const haveFixtures = existsSync(FIXTURES);
if (!haveFixtures) console.warn(`[manifest.test] SKIPPING fixture tests: ${FIXTURES} is absent`);

/** Read-only FileIO over the local disk (fixtures) plus an in-memory write target. */
class TestIO implements ManifestIO {
  readonly written = new Map<string, Uint8Array>();
  async read(path: string): Promise<Uint8Array> {
    return this.written.get(path) ?? new Uint8Array(readFileSync(path));
  }
  async write(path: string, data: Uint8Array): Promise<void> {
    this.written.set(path, data);
  }
}

interface FixtureTable {
  readonly name: string;
  readonly root: string;
  readonly manifests: string[];
  readonly lists: string[];
  readonly indexManifests: string[];
}

function fixtureTables(): FixtureTable[] {
  if (!haveFixtures) return [];
  const tables: FixtureTable[] = [];
  for (const fixture of readdirSync(FIXTURES)) {
    const db = join(FIXTURES, fixture, 'default.db');
    if (!existsSync(db)) continue;
    for (const table of readdirSync(db)) {
      const root = join(db, table);
      const files = readdirSync(join(root, 'manifest')).map((f) => join(root, 'manifest', f));
      tables.push({
        name: fixture,
        root,
        lists: files.filter((f) => basename(f).startsWith('manifest-list-')),
        indexManifests: files.filter((f) => basename(f).startsWith('index-manifest-')),
        manifests: files.filter((f) => /^manifest-(?!list-)/.test(basename(f))),
      });
    }
  }
  return tables;
}

/** Data files on disk as `bucket/fileName`. */
function dataFilesOnDisk(root: string): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (['manifest', 'snapshot', 'schema', 'index'].includes(name)) continue;
        walk(p);
      } else if (/^(data|changelog)-/.test(name)) {
        out.add(`${basename(dir)}/${name}`);
      }
    }
  };
  walk(root);
  return out;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** `avro.schema` JSON of Appendix A (A.1 manifest, A.2 list, A.3 index manifest). */
function appendixSchemas(): Record<'A.1' | 'A.2' | 'A.3', string> {
  return { 'A.1': APPENDIX_A_MANIFEST, 'A.2': APPENDIX_A_MANIFEST_LIST, 'A.3': APPENDIX_A_INDEX_MANIFEST };
}

interface SchemaField {
  name: string;
  type: unknown;
}
function fieldsOf(schema: unknown): SchemaField[] {
  return (schema as { fields: SchemaField[] }).fields;
}

describe('writer schemas equal Appendix A exactly', () => {
  const cases = [
    ['A.1', MANIFEST_ENTRY_SCHEMA, () => writeManifestFile([])],
    ['A.2', MANIFEST_FILE_META_SCHEMA, () => writeManifestList([])],
    ['A.3', INDEX_MANIFEST_ENTRY_SCHEMA, () => writeIndexManifest([])],
  ] as const;
  it.each(cases)('%s', async (key, schema, write) => {
    const expected = appendixSchemas()[key];
    expect(JSON.stringify(schema)).toBe(expected);
    const header = await readAvroHeader(await write(), { path: key });
    expect(header.schemaText).toBe(expected);
    expect([...header.metadata.keys()].sort()).toEqual(['avro.codec', 'avro.schema']);
    expect(header.codec).toBe('zstandard');
  });
});

describe.skipIf(!haveFixtures)('Java-written fixture manifests', () => {
  const tables = fixtureTables();

  it('finds the three fixture tables with manifests', () => {
    expect(tables.map((t) => t.name).sort()).toEqual(['append-schema-evolution', 'pk-dv', 'pk-mor']);
    for (const t of tables) expect(t.manifests.length).toBeGreaterThan(0);
  });

  it.each(tables.map((t) => [t.name, t] as const))(
    '%s: every file decodes; list counts, sizes and file names agree with manifests and disk',
    async (_name, table) => {
      const io = new TestIO();
      const entriesByManifest = new Map<string, ManifestEntry[]>();
      for (const path of table.manifests) {
        const entries = await collect(readManifestEntries(io, path));
        expect(entries.length).toBeGreaterThan(0);
        entriesByManifest.set(basename(path), entries);
      }
      let checked = 0;
      let missing = 0;
      for (const path of table.lists) {
        for (const meta of await readManifestList(io, path)) {
          const entries = entriesByManifest.get(meta.fileName);
          if (entries === undefined) {
            missing++; // manifests merged away by a later commit may be gone from the fixture
            continue;
          }
          checked++;
          expect(meta.fileSize).toBe(statSync(join(table.root, 'manifest', meta.fileName)).size);
          expect(meta.numAddedFiles).toBe(entries.filter((e) => e.kind === 'ADD').length);
          expect(meta.numDeletedFiles).toBe(entries.filter((e) => e.kind === 'DELETE').length);
          expect(meta.minBucket).toBe(Math.min(...entries.map((e) => e.bucket)));
          expect(meta.maxBucket).toBe(Math.max(...entries.map((e) => e.bucket)));
          expect(meta.minLevel).toBe(Math.min(...entries.map((e) => e.file.level)));
          expect(meta.maxLevel).toBe(Math.max(...entries.map((e) => e.file.level)));
        }
      }
      expect(checked).toBeGreaterThan(missing);
      // Every data file ever added is on disk and every data file on disk was added by some entry.
      const added = new Set<string>();
      for (const entries of entriesByManifest.values()) {
        for (const e of entries) if (e.kind === 'ADD') added.add(`bucket-${e.bucket}/${e.file.fileName}`);
      }
      expect([...added].sort()).toEqual([...dataFilesOnDisk(table.root)].sort());

      for (const path of table.indexManifests) {
        for (const e of await readIndexManifest(io, path)) {
          expect(statSync(join(table.root, 'index', e.fileName)).size).toBe(e.fileSize);
        }
      }
    },
  );

  it.each(tables.map((t) => [t.name, t] as const))(
    '%s: folding the latest snapshot leaves only ADDs whose files exist and whose row counts match totalRecordCount',
    async (_name, table) => {
      const io = new TestIO();
      const snapDir = join(table.root, 'snapshot');
      const latest = readFileSync(join(snapDir, 'LATEST'), 'utf8').trim();
      const snap = JSON.parse(readFileSync(join(snapDir, `snapshot-${latest}`), 'utf8')) as {
        baseManifestList: string;
        deltaManifestList: string;
        totalRecordCount: number;
      };
      const live = new Map<string, ManifestEntry>();
      for (const list of [snap.baseManifestList, snap.deltaManifestList]) {
        for (const meta of await readManifestList(io, join(table.root, 'manifest', list))) {
          for await (const e of readManifestEntries(io, join(table.root, 'manifest', meta.fileName))) {
            const id = fileEntryIdentity(e);
            if (e.kind === 'ADD') {
              expect(live.has(id)).toBe(false);
              live.set(id, e);
            } else {
              expect(live.delete(id)).toBe(true);
            }
          }
        }
      }
      expect(live.size).toBeGreaterThan(0);
      const onDisk = dataFilesOnDisk(table.root);
      let rows = 0;
      for (const e of live.values()) {
        expect(onDisk.has(`bucket-${e.bucket}/${e.file.fileName}`)).toBe(true);
        rows += e.file.rowCount;
      }
      expect(rows).toBe(snap.totalRecordCount);
    },
  );

  it('fixture headers are prefixes of the Java 1.4 writer schemas (older files: fewer trailing nullable fields)', async () => {
    const check = (fileSchema: unknown, ours: unknown): void => {
      const theirs = fieldsOf(fileSchema);
      const mine = fieldsOf(ours);
      expect(theirs.length).toBeLessThanOrEqual(mine.length);
      theirs.forEach((f, i) => {
        expect(f.name).toBe(mine[i]!.name);
        if (f.name === '_FILE') check(f.type, mine[i]!.type);
        else expect(JSON.stringify(f)).toBe(JSON.stringify(mine[i]));
      });
    };
    for (const t of tables) {
      for (const [files, schema] of [
        [t.manifests, MANIFEST_ENTRY_SCHEMA],
        [t.lists, MANIFEST_FILE_META_SCHEMA],
        [t.indexManifests, INDEX_MANIFEST_ENTRY_SCHEMA],
      ] as const) {
        for (const path of files) {
          const header = await readAvroHeader(readFileSync(path), { path });
          expect(header.codec).toBe('zstandard');
          check(header.schema, schema);
        }
      }
    }
  });

  it('re-encoding every fixture file with our writers decodes to equal models and equal datums', async () => {
    const io = new TestIO();
    let files = 0;
    for (const t of tables) {
      for (const path of t.manifests) {
        const entries = await collect(readManifestEntries(io, path));
        const again = await collect(decodeManifestEntries(await writeManifestFile(entries), 'rewritten'));
        expect(again).toEqual(entries);
        await compareDatums(path, await writeManifestFile(entries));
        files++;
      }
      for (const path of t.lists) {
        const metas = await readManifestList(io, path);
        expect(await decodeManifestList(await writeManifestList(metas), 'rewritten')).toEqual(metas);
        await compareDatums(path, await writeManifestList(metas));
        files++;
      }
      for (const path of t.indexManifests) {
        const entries = await readIndexManifest(io, path);
        expect(await decodeIndexManifest(await writeIndexManifest(entries), 'rewritten')).toEqual(entries);
        await compareDatums(path, await writeIndexManifest(entries));
        files++;
      }
    }
    expect(files).toBeGreaterThan(30);
  });

  it('pk-mor: entries carry the values the fixture README describes', async () => {
    const t = tables.find((x) => x.name === 'pk-mor')!;
    const io = new TestIO();
    const all: ManifestEntry[] = [];
    for (const p of t.manifests) all.push(...(await collect(readManifestEntries(io, p))));
    for (const e of all) {
      expect(e.totalBuckets).toBe(2);
      // Partition f1 INT: BinaryRow with arity 1 (4-byte BE prefix), null bits word, 8-byte slot.
      expect(e.partition.length).toBe(4 + 8 + 8);
      expect(typeof e.file.minSequenceNumber).toBe('bigint');
      expect(e.file.maxSequenceNumber >= e.file.minSequenceNumber).toBe(true);
      expect(e.file.writeCols).toBeNull(); // 1.3-SNAPSHOT files have no _WRITE_COLS: read as null
      expect(e.file.valueStats.nullCounts).toHaveLength(4);
      expect(e.file.keyStats.nullCounts).toHaveLength(2);
    }
    // Compaction writes files at level > 0 and removes level-0 inputs.
    expect(all.some((e) => e.kind === 'DELETE')).toBe(true);
    expect(all.some((e) => e.file.level > 0)).toBe(true);
    const strings = all.map((e) => Buffer.from(e.file.valueStats.maxValues).toString('latin1')).join('|');
    expect(strings).toContain('Two roads diverh'); // truncated max stat
  });

  it('append-schema-evolution: bucket-unaware entries and empty key stats', async () => {
    const t = tables.find((x) => x.name === 'append-schema-evolution')!;
    const io = new TestIO();
    const all: ManifestEntry[] = [];
    for (const p of t.manifests) all.push(...(await collect(readManifestEntries(io, p))));
    expect(new Set(all.map((e) => e.file.schemaId))).toEqual(new Set([0, 1]));
    for (const e of all) {
      expect(e.totalBuckets).toBe(-1);
      expect(e.bucket).toBe(0);
      expect(e.file.minKey).toEqual(EMPTY_SIMPLE_STATS.minValues);
      expect(e.file.keyStats).toEqual(EMPTY_SIMPLE_STATS);
    }
  });
});

/** Decodes both files to raw datums (with their own writer schemas) and compares them. */
async function compareDatums(originalPath: string, rewritten: Uint8Array): Promise<void> {
  const a = await collect(readAvroRecords(readFileSync(originalPath), { path: originalPath }));
  const b = await collect(readAvroRecords(rewritten, { path: 'rewritten' }));
  expect(b.length).toBe(a.length);
  // Fields present in the original compare equal; fields the 1.4 schema adds are null.
  const same = (x: AvroRecord, y: AvroRecord): void => {
    for (const [k, v] of Object.entries(y)) {
      if (!(k in x)) {
        expect(v).toBeNull();
      } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v) && !Array.isArray(v)) {
        same(x[k] as AvroRecord, v as AvroRecord);
      } else {
        expect(v).toEqual(x[k]);
      }
    }
  };
  a.forEach((rec, i) => same(rec, b[i]!));
}

describe('manifest models', () => {
  const entry = (over: Partial<ManifestEntry['file']> = {}, kind: 'ADD' | 'DELETE' = 'ADD'): ManifestEntry => ({
    kind,
    partition: new Uint8Array([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0]),
    bucket: 1,
    totalBuckets: 2,
    file: {
      fileName: 'data-1.parquet',
      fileSize: 1234,
      rowCount: 10,
      minKey: new Uint8Array([1, 2]),
      maxKey: new Uint8Array([3, 4]),
      keyStats: { minValues: new Uint8Array([5]), maxValues: new Uint8Array([6]), nullCounts: [0, null] },
      valueStats: { minValues: new Uint8Array(12), maxValues: new Uint8Array(12), nullCounts: null },
      minSequenceNumber: 0n,
      maxSequenceNumber: 2n ** 62n + 1n,
      schemaId: 3,
      level: 5,
      extraFiles: ['data-1.parquet.index'],
      creationTime: 1_756_295_733_342,
      deleteRowCount: 2,
      embeddedIndex: new Uint8Array([9, 9]),
      fileSource: 1,
      valueStatsCols: ['a', 'b'],
      externalPath: 's3://bucket/x/data-1.parquet',
      firstRowId: 100,
      writeCols: ['a'],
      writeColsSequences: null,
      ...over,
    },
  });

  it.each(AVRO_CODEC_NAMES)('manifest entries with every field set round-trip with codec %s', async (codec) => {
    const entries = [entry(), entry({ fileName: 'data-2.parquet', creationTime: null, externalPath: null }, 'DELETE')];
    const bytes = await writeManifestFile(entries, { codec });
    expect((await readAvroHeader(bytes, { path: 'm' })).codec).toBe(codec);
    expect(await collect(decodeManifestEntries(bytes, 'm'))).toEqual(entries);
  });

  it('manifest lists and index manifests round-trip through a FileIO', async () => {
    const io = new TestIO();
    const metas: ManifestFileMeta[] = [
      {
        fileName: 'manifest-a-0',
        fileSize: 999,
        numAddedFiles: 3,
        numDeletedFiles: 1,
        partitionStats: { minValues: new Uint8Array([1]), maxValues: new Uint8Array([2]), nullCounts: [0] },
        schemaId: 0,
        minBucket: 0,
        maxBucket: 1,
        minLevel: 0,
        maxLevel: 5,
        minRowId: null,
        maxRowId: null,
      },
    ];
    const size = await writeManifestListTo(io, 'mem://t/manifest/manifest-list-x-0', metas, { codec: 'deflate' });
    expect(size).toBe(io.written.get('mem://t/manifest/manifest-list-x-0')!.length);
    expect(await readManifestList(io, 'mem://t/manifest/manifest-list-x-0')).toEqual(metas);

    const idx: IndexManifestEntry[] = [
      {
        kind: 'ADD',
        partition: new Uint8Array(12),
        bucket: 0,
        indexType: 'DELETION_VECTORS',
        fileName: 'index-u-0',
        fileSize: 31,
        rowCount: 1,
        dvRanges: [{ dataFileName: 'data-a.parquet', offset: 1, length: 22, cardinality: 1 }],
        externalPath: null,
        globalIndex: null,
      },
      {
        kind: 'ADD',
        partition: new Uint8Array(12),
        bucket: 0,
        indexType: 'btree',
        fileName: 'index-u-1',
        fileSize: 100,
        rowCount: 7,
        dvRanges: null,
        externalPath: 'oss://x/index-u-1',
        globalIndex: {
          rowRangeStart: 0,
          rowRangeEnd: 99,
          indexFieldId: 2,
          extraFieldIds: [3, 4],
          indexMeta: new Uint8Array([1]),
          sourceMeta: null,
        },
      },
    ];
    expect(await decodeIndexManifest(await writeIndexManifest(idx), 'i')).toEqual(idx);
    const n = await writeManifestFileTo(io, 'mem://t/manifest/manifest-x-0', [entry()]);
    expect(n).toBeGreaterThan(0);
    expect(await collect(readManifestEntries(io, 'mem://t/manifest/manifest-x-0'))).toEqual([entry()]);
  });

  it('reads files written with an older/foreign schema by field name (missing nullable fields are null)', async () => {
    // pypaimon-style: other record names, nullable fields omitted, fields reordered, an unknown field.
    const schema = {
      type: 'record',
      name: 'ManifestEntry',
      fields: [
        { name: '_KIND', type: 'int' },
        { name: '_VERSION', type: 'int' },
        { name: '_PARTITION', type: 'bytes' },
        { name: '_BUCKET', type: 'int' },
        { name: '_TOTAL_BUCKETS', type: 'int' },
        { name: '_SOMETHING_NEW', type: ['null', 'string'], default: null },
        {
          name: '_FILE',
          type: {
            type: 'record',
            name: 'DataFileMeta',
            fields: [
              { name: '_FILE_NAME', type: 'string' },
              { name: '_FILE_SIZE', type: 'long' },
              { name: '_ROW_COUNT', type: 'long' },
              { name: '_MIN_KEY', type: 'bytes' },
              { name: '_MAX_KEY', type: 'bytes' },
              {
                name: '_KEY_STATS',
                type: {
                  type: 'record',
                  name: 'S1',
                  fields: [
                    { name: '_MIN_VALUES', type: 'bytes' },
                    { name: '_MAX_VALUES', type: 'bytes' },
                  ],
                },
              },
              { name: '_VALUE_STATS', type: 'S1' },
              { name: '_MIN_SEQUENCE_NUMBER', type: 'long' },
              { name: '_MAX_SEQUENCE_NUMBER', type: 'long' },
              { name: '_SCHEMA_ID', type: 'long' },
              { name: '_LEVEL', type: 'int' },
              { name: '_EXTRA_FILES', type: { type: 'array', items: 'string' } },
              { name: '_WRITE_COLS_SEQUENCES', type: ['null', { type: 'array', items: 'long' }], default: null },
            ],
          },
        },
      ],
    };
    const stats = { _MIN_VALUES: Buffer.alloc(12), _MAX_VALUES: Buffer.alloc(12) };
    const bytes = await writeAvroFile(schema, [
      {
        _KIND: 1,
        _VERSION: 2,
        _PARTITION: Buffer.alloc(12),
        _BUCKET: 0,
        _TOTAL_BUCKETS: -1,
        _SOMETHING_NEW: 'x',
        _FILE: {
          _FILE_NAME: 'data-z.parquet',
          _FILE_SIZE: 10,
          _ROW_COUNT: 1,
          _MIN_KEY: Buffer.alloc(12),
          _MAX_KEY: Buffer.alloc(12),
          _KEY_STATS: stats,
          _VALUE_STATS: stats,
          _MIN_SEQUENCE_NUMBER: 2n ** 60n,
          _MAX_SEQUENCE_NUMBER: 2n ** 63n - 1n,
          _SCHEMA_ID: 0,
          _LEVEL: 0,
          _EXTRA_FILES: [],
          _WRITE_COLS_SEQUENCES: [1, 2n ** 62n],
        },
      },
    ]);
    const [e] = await collect(decodeManifestEntries(bytes, 'py'));
    expect(e!.kind).toBe('DELETE');
    expect(e!.file.maxSequenceNumber).toBe(2n ** 63n - 1n);
    expect(e!.file.minSequenceNumber).toBe(2n ** 60n);
    expect(e!.file.keyStats.nullCounts).toBeNull();
    expect(e!.file.creationTime).toBeNull();
    expect(e!.file.externalPath).toBeNull();
    expect(e!.file.writeColsSequences).toEqual([1n, 2n ** 62n]);
    // The 1.4 writer schema has no _WRITE_COLS_SEQUENCES: refuse to drop it silently.
    await expect(writeManifestFile([e!])).rejects.toThrow(/_WRITE_COLS_SEQUENCES/);
  });

  it('rejects version-1 data manifests and missing required fields with the file path', async () => {
    const v1 = await writeAvroFile({ type: 'record', name: 'r', fields: [{ name: '_VERSION', type: 'int' }] }, [{ _VERSION: 1 }], {
      codec: 'null',
    });
    await expect(collect(decodeManifestEntries(v1, 'memory://t/manifest/m-0'))).rejects.toThrow(/recreate/);
    await expect(collect(decodeManifestEntries(v1, 'memory://t/manifest/m-0'))).rejects.toThrow(FormatError);
    const noName = await writeAvroFile(
      {
        type: 'record',
        name: 'r',
        fields: [
          { name: '_VERSION', type: 'int' },
          { name: '_FILE_SIZE', type: 'long' },
        ],
      },
      [{ _VERSION: 2, _FILE_SIZE: 1 }],
      { codec: 'null' },
    );
    const err = await decodeManifestList(noName, 'memory://t/manifest/list-0').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptFileError);
    expect((err as Error).message).toMatch(/list-0.*_FILE_NAME/);
  });

  it('corrupt manifest bytes raise CorruptFileError naming the file', async () => {
    const good = await writeManifestFile([entry(), entry({ fileName: 'b' })]);
    const path = 'memory://t/manifest/manifest-broken-0';
    await expect(collect(decodeManifestEntries(good.subarray(0, good.length - 30), path))).rejects.toThrow(CorruptFileError);
    await expect(collect(decodeManifestEntries(good.subarray(0, good.length - 30), path))).rejects.toThrow(path);
    await expect(decodeManifestList(new Uint8Array([1, 2, 3]), path)).rejects.toThrow(CorruptFileError);
    await expect(decodeIndexManifest(Buffer.from('garbage garbage'), path)).rejects.toThrow(CorruptFileError);
  });

  it('decodes byte fields as views into the block with copyBytes: false, equal to the copies', async () => {
    const entries = [entry(), entry({ fileName: 'data-2.parquet', embeddedIndex: null }, 'DELETE')];
    const bytes = await writeManifestFile(entries, { codec: 'null' });
    const copied = await collect(decodeManifestEntries(bytes, 'm'));
    const viewed = await collect(decodeManifestEntries(bytes, 'm', { copyBytes: false }));
    // Buffers (views) and Uint8Arrays (copies) compared by content.
    const plainBytes = (v: unknown): unknown =>
      v instanceof Uint8Array
        ? [...v]
        : Array.isArray(v)
          ? v.map(plainBytes)
          : v !== null && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainBytes(x)]))
            : v;
    expect(plainBytes(viewed)).toEqual(plainBytes(copied));
    expect(plainBytes(viewed)).toEqual(plainBytes(entries));
    // Copies own their memory; views share the decoded block.
    expect(copied[0]!.file.minKey.buffer).not.toBe(copied[0]!.file.maxKey.buffer);
    expect(viewed[0]!.file.minKey.buffer).toBe(viewed[0]!.file.maxKey.buffer);
  });

  it('fileEntryIdentity keeps names apart from the optional fields whatever characters they hold', () => {
    const plain = { extraFiles: [], embeddedIndex: null, externalPath: null };
    const ids = [
      entry({ ...plain, fileName: 'a' }),
      entry({ ...plain, fileName: 'a|J' }),
      entry({ ...plain, fileName: 'J["a",[""],null,null]' }),
      entry({ ...plain, fileName: 'a', extraFiles: [''] }),
      entry({ ...plain, fileName: 'a', externalPath: '' }),
      entry({ ...plain, fileName: 'a', embeddedIndex: new Uint8Array(0) }),
      entry({ ...plain, fileName: '5|N' }),
      { ...entry({ ...plain, fileName: 'N' }), bucket: 15 },
    ].map(fileEntryIdentity);
    expect(new Set(ids).size).toBe(ids.length);
    expect(fileEntryIdentity(entry({ ...plain, fileName: 'a' }))).toBe(fileEntryIdentity(entry({ ...plain, fileName: 'a' }, 'DELETE')));
  });

  it('fileEntryIdentity includes the level and the other identity fields but not kind or stats', () => {
    const base = entry();
    expect(fileEntryIdentity(entry({}, 'DELETE'))).toBe(fileEntryIdentity(base));
    expect(fileEntryIdentity(entry({ rowCount: 99, keyStats: EMPTY_SIMPLE_STATS }))).toBe(fileEntryIdentity(base));
    const variants: ManifestEntry[] = [
      entry({ level: 4 }),
      entry({ fileName: 'data-2.parquet' }),
      entry({ extraFiles: [] }),
      entry({ embeddedIndex: null }),
      entry({ externalPath: null }),
      { ...base, bucket: 0 },
      { ...base, partition: new Uint8Array(base.partition.length) },
    ];
    const ids = new Set([fileEntryIdentity(base), ...variants.map(fileEntryIdentity)]);
    expect(ids.size).toBe(variants.length + 1);
  });
});
