/**
 * The direct manifest entry decoder against the avsc reference path: field for field on every
 * Java-written manifest of the fixtures and on our own manifests (random entries, other writer
 * schemas), with eager, lazy and arena-packed stats; and its partition and bucket callbacks.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { writeAvroFile } from '../src/avro-container.js';
import { CorruptFileError } from '../src/errors.js';
import {
  decodeManifestEntries,
  decodeManifestEntriesWithAvsc,
  decodeManifestEntryBatches,
  manifestEntryToAvro,
  writeManifestFile,
  type ManifestEntry,
} from '../src/manifest-entry.js';
import { EMPTY_SIMPLE_STATS } from '../src/manifest-fields.js';
import { MANIFEST_ENTRY_SCHEMA } from '../src/manifest-schemas.js';
import { ByteArena, EncodedSimpleStats } from '../src/manifest-stats.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';
import { collect, hex, javaManifests, plain, randomEntry } from './helpers/manifest-entries.js';

/** All decoding modes of the direct decoder, as plain values. */
async function everyMode(bytes: Uint8Array, path: string): Promise<Record<string, unknown[]>> {
  const arena = new ByteArena(64);
  const modes: Record<string, unknown[]> = {
    copy: (await collect(decodeManifestEntries(bytes, path))).map(plain),
    views: (await collect(decodeManifestEntries(bytes, path, { copyBytes: false }))).map(plain),
    lazy: (await collect(decodeManifestEntries(bytes, path, { copyBytes: false, lazyStats: true }))).map(plain),
    lazyCopy: (await collect(decodeManifestEntries(bytes, path, { lazyStats: true }))).map(plain),
    arena: (await collect(decodeManifestEntries(bytes, path, { copyBytes: false, lazyStats: true, arena }))).map(plain),
  };
  const batches: ManifestEntry[] = [];
  for await (const b of decodeManifestEntryBatches(bytes, path)) batches.push(...b);
  modes['batches'] = batches.map(plain);
  return modes;
}

describe('direct manifest entry decoder', () => {
  const manifests = javaManifests();

  it.skipIf(manifests.length === 0)('gives field for field the entries of the avsc path on every Java-written manifest', async () => {
    let entries = 0;
    for (const path of manifests) {
      const bytes = new Uint8Array(readFileSync(path));
      const expected = (await collect(decodeManifestEntriesWithAvsc(bytes, path))).map(plain);
      expect(expected.length).toBeGreaterThan(0);
      for (const [mode, got] of Object.entries(await everyMode(bytes, path))) {
        expect({ path, mode, got }).toEqual({ path, mode, got: expected });
      }
      entries += expected.length;
    }
    expect(entries).toBeGreaterThan(manifests.length);
  });

  it.skipIf(manifests.length === 0)(
    'shares the empty key stats and empty file lists of Java-written manifests when decoding lazily',
    async () => {
      let shared = 0;
      for (const path of manifests) {
        const bytes = new Uint8Array(readFileSync(path));
        const expected = await collect(decodeManifestEntriesWithAvsc(bytes, path));
        const got = await collect(decodeManifestEntries(bytes, path, { copyBytes: false, lazyStats: true, arena: new ByteArena() }));
        expect(got.length).toBe(expected.length);
        const avro = Buffer.from(bytes.subarray(0, 4)).equals(Buffer.from('Obj\x01', 'latin1'));
        got.forEach((e, i) => {
          const want = expected[i]!.file;
          const empty =
            want.keyStats.nullCounts?.length === 0 &&
            hex(want.keyStats.minValues) === hex(EMPTY_SIMPLE_STATS.minValues) &&
            hex(want.keyStats.maxValues) === hex(EMPTY_SIMPLE_STATS.maxValues);
          // Java's encoding of empty stats is recognised byte for byte: the plan keeps no copy of it.
          if (empty) {
            expect({ path, i, keyStats: e.file.keyStats }).toEqual({ path, i, keyStats: EMPTY_SIMPLE_STATS });
            expect(e.file.keyStats).toBe(EMPTY_SIMPLE_STATS);
            shared++;
          } else expect(e.file.keyStats).not.toBe(EMPTY_SIMPLE_STATS);
          // (ORC manifests go through the record path, which builds its own lists.)
          if (want.extraFiles.length === 0 && avro) expect(Object.isFrozen(e.file.extraFiles)).toBe(true);
          else expect(e.file.extraFiles).toEqual(want.extraFiles);
        });
      }
      expect(shared).toBeGreaterThan(0);
    },
  );

  it('gives field for field the entries of the avsc path on our own manifests with every optional field', async () => {
    const rng = seededRandom(7);
    const entries = Array.from({ length: 600 }, (_, i) => randomEntry(rng, i));
    for (const codec of ['zstandard', 'null', 'deflate'] as const) {
      const bytes = await writeManifestFile(entries, { codec, blockSize: 4096 });
      const expected = (await collect(decodeManifestEntriesWithAvsc(bytes, 'ours'))).map(plain);
      expect(expected).toHaveLength(entries.length);
      expect(expected.map((e) => (e as { file: { fileName: string } }).file.fileName)).toEqual(entries.map((e) => e.file.fileName));
      for (const [mode, got] of Object.entries(await everyMode(bytes, 'ours'))) expect({ mode, got }).toEqual({ mode, got: expected });
    }
  });

  it('follows other writer schemas: reordered fields, unknown fields, fewer optional fields, and falls back to avsc for others', async () => {
    const rng = seededRandom(11);
    const entries = Array.from({ length: 50 }, (_, i) => randomEntry(rng, i));
    const fileSchema = (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string; type: { fields: unknown[] } }[])[5]!.type;
    const fileFields = [...fileSchema.fields] as { name: string }[];
    const reordered = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: [
        { name: '_EXTRA_TOP', type: ['null', { type: 'map', values: { type: 'array', items: 'double' } }], default: null },
        ...(MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[])
          .slice()
          .reverse()
          .map((f) =>
            f.name === '_FILE'
              ? {
                  ...f,
                  type: {
                    ...fileSchema,
                    fields: [
                      ...fileFields.slice().reverse(),
                      {
                        name: '_UNKNOWN',
                        type: { type: 'record', name: 'U', fields: [{ name: 'x', type: { type: 'fixed', name: 'F', size: 3 } }] },
                      },
                      { name: '_WRITE_COLS_SEQUENCES', type: ['null', { type: 'array', items: 'long' }], default: null },
                    ],
                  },
                }
              : f,
          ),
      ],
    };
    const records = entries.map((e, i) => {
      const r = manifestEntryToAvro({ ...e, file: { ...e.file, writeColsSequences: null } });
      const file = r['_FILE'] as Record<string, unknown>;
      return {
        ...r,
        _EXTRA_TOP: i % 2 === 0 ? null : { a: [1.5, 2.5], b: [] },
        _FILE: { ...file, _UNKNOWN: { x: Buffer.from([1, 2, 3]) }, _WRITE_COLS_SEQUENCES: i % 3 === 0 ? null : [5, 2n ** 62n] },
      };
    });
    const older = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[]).map((f) =>
        f.name === '_FILE' ? { ...f, type: { ...fileSchema, fields: fileFields.slice(0, 14) } } : f,
      ),
    };
    // A `fixed` partition is not something the direct decoder reads: the avsc path takes over.
    const fixedPartition = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[]).map((f) =>
        f.name === '_PARTITION' ? { name: '_PARTITION', type: { type: 'fixed', name: 'P', size: 16 } } : f,
      ),
    };
    const fixedRecords = entries.map((e) => ({
      ...manifestEntryToAvro({ ...e, file: { ...e.file, writeColsSequences: null } }),
      _PARTITION: Buffer.alloc(16, 3),
    }));
    const olderRecords = entries.map((e) => manifestEntryToAvro({ ...e, file: { ...e.file, writeColsSequences: null } }));
    for (const [schema, recs] of [
      [reordered, records],
      [older, olderRecords],
      [fixedPartition, fixedRecords],
    ] as const) {
      const bytes = await writeAvroFile(schema, recs, { blockSize: 2048 });
      const expected = (await collect(decodeManifestEntriesWithAvsc(bytes, 'other'))).map(plain);
      expect(expected).toHaveLength(entries.length);
      for (const [mode, got] of Object.entries(await everyMode(bytes, 'other'))) expect({ mode, got }).toEqual({ mode, got: expected });
    }
    const seqs = (await collect(decodeManifestEntries(await writeAvroFile(reordered, records), 'r'))).map((e) => e.file.writeColsSequences);
    expect(seqs[1]).toEqual([5n, 2n ** 62n]);
    expect(seqs[0]).toBeNull();
  });

  it('keeps stats encoded until read, shares empty stats and rows, and holds no view of the block in an arena', async () => {
    const rng = seededRandom(3);
    const entries = Array.from({ length: 20 }, (_, i) => randomEntry(rng, i, i % 2 === 0));
    const bytes = new Uint8Array(await writeManifestFile(entries, { codec: 'null' }));
    const expected = (await collect(decodeManifestEntriesWithAvsc(bytes, 'm'))).map(plain);
    const arena = new ByteArena();
    const got = await collect(decodeManifestEntries(bytes, 'm', { copyBytes: false, lazyStats: true, arena }));
    const appendLike = got.filter((_, i) => i % 2 === 0);
    for (const e of appendLike) expect(e.file.keyStats).toBe(EMPTY_SIMPLE_STATS);
    const pk = got.filter((_, i) => i % 2 === 1);
    for (const e of pk) expect(e.file.keyStats).toBeInstanceOf(EncodedSimpleStats);
    for (const e of got) expect(e.file.valueStats).toBeInstanceOf(EncodedSimpleStats);
    bytes.fill(0xee); // the arena copies must not depend on the manifest bytes any more
    expect(got.map(plain)).toEqual(expected);
    expect(got.map((e) => e.file.fileName)).toEqual(entries.map((e) => e.file.fileName));
    expect(JSON.parse(JSON.stringify(got[1]!.file.valueStats))).toHaveProperty('nullCounts');
  });

  it('drops entries by raw partition bytes and bucket before decoding them, as filtering the decoded entries would', async () => {
    const rng = seededRandom(5);
    const entries = Array.from({ length: 400 }, (_, i) => randomEntry(rng, i));
    const bytes = await writeManifestFile(entries, { blockSize: 1024 });
    const all = await collect(decodeManifestEntriesWithAvsc(bytes, 'f'));
    const partitions = [...new Set(all.map((e) => hex(e.partition)!))];
    for (let trial = 0; trial < 10; trial++) {
      const wanted = new Set(partitions.filter(() => rng() < 0.4));
      const bucket = trial % 3 === 0 ? 1 : undefined;
      const seen: string[] = [];
      const got = await collect(
        decodeManifestEntries(bytes, 'f', {
          copyBytes: false,
          lazyStats: true,
          partition: (block, start, end) => {
            const key = Buffer.from(block.subarray(start, end)).toString('hex');
            seen.push(key);
            return wanted.has(key) ? block.subarray(start, end) : undefined;
          },
          acceptBucket: (b) => bucket === undefined || b === bucket,
        }),
      );
      const expected = all.filter((e) => wanted.has(hex(e.partition)!) && (bucket === undefined || e.bucket === bucket));
      expect(got.map(plain)).toEqual(expected.map(plain));
      expect(seen).toHaveLength(all.length);
    }
  });

  it('reports damaged entry bytes as CorruptFileError naming the file', async () => {
    const entries = [randomEntry(seededRandom(1), 0)];
    const good = await writeManifestFile(entries, { codec: 'null' });
    // Find the file name in the block and cut the block's declared content in the middle of it.
    const text = Buffer.from(good);
    const at = text.indexOf(Buffer.from(entries[0]!.file.fileName));
    const damaged = Buffer.from(good);
    damaged[at - 1] = 0x7e; // string length far beyond the block
    await expect(collect(decodeManifestEntries(damaged, 'bad-manifest'))).rejects.toThrow(CorruptFileError);
    await expect(collect(decodeManifestEntries(damaged, 'bad-manifest'))).rejects.toThrow(/bad-manifest/);
  });
});
