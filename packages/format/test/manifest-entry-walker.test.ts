/**
 * The walk over manifest entry bytes (ManifestEntryWalker) against the direct decoder: on every
 * Java-written Avro manifest of the fixtures and on our own manifests (every optional field, other
 * writer schemas), its registers and the file decoded from the `_FILE` record bytes alone
 * (`fileAt`) are field for field the decoded entry; a visitor may stop and resume the walk; damaged
 * bytes fail as the decoder fails, naming the file.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { readAvroBlocks, writeAvroFile } from '../src/avro-container.js';
import { CorruptFileError, FormatError } from '../src/errors.js';
import { isOrc } from '../src/orc-records.js';
import {
  decodeManifestEntries,
  manifestEntryToAvro,
  writeManifestFile,
  type DataFileMeta,
  type ManifestEntry,
} from '../src/manifest-entry.js';
import { MANIFEST_ENTRY_SCHEMA } from '../src/manifest-schemas.js';
import { ManifestEntryWalker } from '../src/manifest-entry-walker.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';
import { collect, hex, javaManifests, plain, randomEntry } from './helpers/manifest-entries.js';

const plainIdentity = (f: DataFileMeta): boolean => f.extraFiles.length === 0 && f.embeddedIndex === null && f.externalPath === null;

/** What the walk gives for each entry: its registers, and the file decoded from a copy of its record bytes. */
async function walked(bytes: Uint8Array, path: string): Promise<unknown[] | null> {
  const out: unknown[] = [];
  for await (const block of readAvroBlocks(bytes, { path })) {
    const walker = ManifestEntryWalker.forHeader(block.header);
    if (walker === null) return null;
    const data = block.data;
    const end = walker.walk(data, block.count, block.index, path, (w) => {
      // The record bytes alone, copied elsewhere at another offset, decode to the same file.
      const record = Buffer.concat([Buffer.alloc(3, 0xee), data.subarray(w.fileStart, w.fileEnd)]);
      const file = w.fileAt(record, 3);
      out.push({
        kind: w.kind === 0 ? 'ADD' : 'DELETE',
        partition: hex(data.subarray(w.partitionStart, w.partitionEnd)),
        bucket: w.bucket,
        totalBuckets: w.totalBuckets,
        fileName: data.toString('utf8', w.nameStart, w.nameEnd),
        level: w.level,
        rowCount: w.rowCount,
        schemaId: w.schemaId,
        minSequenceNumber: Number.isNaN(w.minSequenceNumber) ? 'unsafe' : w.minSequenceNumber,
        plainIdentity: w.plainIdentity,
        entry: plain({
          kind: w.kind === 0 ? 'ADD' : 'DELETE',
          partition: data.subarray(w.partitionStart, w.partitionEnd),
          bucket: w.bucket,
          totalBuckets: w.totalBuckets,
          file,
        }),
      });
      return true;
    });
    expect(end).toBe(block.count);
  }
  return out;
}

/** The same, from the decoder's entries. */
function expectedOf(entries: readonly ManifestEntry[]): unknown[] {
  return entries.map((e) => {
    const seq = e.file.minSequenceNumber;
    return {
      kind: e.kind,
      partition: hex(e.partition),
      bucket: e.bucket,
      totalBuckets: e.totalBuckets,
      fileName: e.file.fileName,
      level: e.file.level,
      rowCount: e.file.rowCount,
      schemaId: e.file.schemaId,
      minSequenceNumber: seq <= BigInt(Number.MAX_SAFE_INTEGER) && seq >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(seq) : 'unsafe',
      plainIdentity: plainIdentity(e.file),
      entry: plain(e),
    };
  });
}

describe('ManifestEntryWalker', () => {
  const manifests = javaManifests();

  it.skipIf(manifests.length === 0)('reads every Java-written Avro manifest as the decoder does, field for field', async () => {
    let entries = 0;
    for (const path of manifests) {
      const bytes = new Uint8Array(readFileSync(path));
      if (isOrc(bytes)) continue;
      const got = await walked(bytes, path);
      expect({ path, walks: got !== null }).toEqual({ path, walks: true });
      const expected = expectedOf(await collect(decodeManifestEntries(bytes, path, { copyBytes: false, lazyStats: true })));
      expect({ path, got }).toEqual({ path, got: expected });
      entries += expected.length;
    }
    expect(entries).toBeGreaterThan(0);
  });

  it('reads our own manifests with every optional field and unsafe sequence numbers, in every codec', async () => {
    const rng = seededRandom(17);
    const entries = Array.from({ length: 500 }, (_, i) => {
      const e = randomEntry(rng, i);
      // Sequence numbers beyond 2^53 cannot be a register value: the walk says so (NaN).
      return i % 7 === 0 ? { ...e, file: { ...e.file, minSequenceNumber: 2n ** 60n + BigInt(i) } } : e;
    });
    for (const codec of ['zstandard', 'null', 'deflate'] as const) {
      const bytes = await writeManifestFile(entries, { codec, blockSize: 4096 });
      const expected = expectedOf(await collect(decodeManifestEntries(bytes, 'ours')));
      expect(expected).toHaveLength(entries.length);
      expect(expected.some((e) => (e as { minSequenceNumber: unknown }).minSequenceNumber === 'unsafe')).toBe(true);
      expect(expected.some((e) => (e as { plainIdentity: boolean }).plainIdentity)).toBe(true);
      expect(expected.some((e) => !(e as { plainIdentity: boolean }).plainIdentity)).toBe(true);
      expect({ codec, got: await walked(bytes, 'ours') }).toEqual({ codec, got: expected });
    }
  });

  it('follows reordered and older writer schemas, and declines one it cannot read (the decoder takes over)', async () => {
    const rng = seededRandom(23);
    const entries = Array.from({ length: 60 }, (_, i) => randomEntry(rng, i));
    const fileSchema = (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string; type: { fields: unknown[] } }[])[5]!.type;
    const fileFields = [...fileSchema.fields] as { name: string }[];
    const reordered = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: [
        { name: '_EXTRA_TOP', type: ['null', { type: 'map', values: 'long' }], default: null },
        ...(MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[])
          .slice()
          .reverse()
          .map((f) => (f.name === '_FILE' ? { ...f, type: { ...fileSchema, fields: fileFields.slice().reverse() } } : f)),
      ],
    };
    const older = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[]).map((f) =>
        f.name === '_FILE' ? { ...f, type: { ...fileSchema, fields: fileFields.slice(0, 14) } } : f,
      ),
    };
    const records = entries.map((e, i) => ({ ...manifestEntryToAvro(e), _EXTRA_TOP: i % 2 === 0 ? null : { a: 1 } }));
    const olderRecords = entries.map((e) => manifestEntryToAvro(e));
    for (const [schema, recs] of [
      [reordered, records],
      [older, olderRecords],
    ] as const) {
      const bytes = await writeAvroFile(schema, recs, { blockSize: 2048 });
      const expected = expectedOf(await collect(decodeManifestEntries(bytes, 'other')));
      expect(await walked(bytes, 'other')).toEqual(expected);
    }
    const fixedPartition = {
      ...MANIFEST_ENTRY_SCHEMA,
      fields: (MANIFEST_ENTRY_SCHEMA['fields'] as { name: string }[]).map((f) =>
        f.name === '_PARTITION' ? { name: '_PARTITION', type: { type: 'fixed', name: 'P', size: 16 } } : f,
      ),
    };
    const fixed = await writeAvroFile(
      fixedPartition,
      entries.map((e) => ({ ...manifestEntryToAvro(e), _PARTITION: Buffer.alloc(16, 3) })),
    );
    expect(await walked(fixed, 'fixed')).toBeNull();
  });

  it('stops where the visitor says and walks on from there, visiting every entry once', async () => {
    const rng = seededRandom(29);
    const entries = Array.from({ length: 300 }, (_, i) => randomEntry(rng, i));
    const bytes = await writeManifestFile(entries, { codec: 'null', blockSize: 1 << 20 });
    const names: string[] = [];
    let stops = 0;
    for await (const block of readAvroBlocks(bytes, { path: 'm' })) {
      const walker = ManifestEntryWalker.forHeader(block.header)!;
      let stopAt = 7;
      const visit = (w: ManifestEntryWalker): boolean => {
        if (names.length === stopAt) {
          stopAt += 31;
          return false;
        }
        names.push(block.data.toString('utf8', w.nameStart, w.nameEnd));
        return true;
      };
      let from = 0;
      let pos = 0;
      for (;;) {
        from = walker.walk(block.data, block.count, block.index, 'm', visit, from, pos);
        if (from === block.count) break;
        stops++;
        pos = walker.resumeAt;
      }
    }
    expect(stops).toBeGreaterThan(5);
    expect(names).toEqual(entries.map((e) => e.file.fileName));
  });

  it('fails on damaged bytes as the decoder does, naming the file', async () => {
    const rng = seededRandom(31);
    const entries = [randomEntry(rng, 0), randomEntry(rng, 1)];
    const good = Buffer.from(await writeManifestFile(entries, { codec: 'null' }));
    const walkAll = async (bytes: Uint8Array): Promise<void> => {
      for await (const block of readAvroBlocks(bytes, { path: 'bad-manifest' })) {
        ManifestEntryWalker.forHeader(block.header)!.walk(block.data, block.count, block.index, 'bad-manifest', () => true);
      }
    };
    await expect(walkAll(good)).resolves.toBeUndefined();
    // A string length far beyond the block.
    const longName = Buffer.from(good);
    longName[good.indexOf(Buffer.from(entries[0]!.file.fileName)) - 1] = 0x7e;
    await expect(walkAll(longName)).rejects.toThrow(CorruptFileError);
    await expect(walkAll(longName)).rejects.toThrow(/bad-manifest/);
    await expect(collect(decodeManifestEntries(longName, 'bad-manifest'))).rejects.toThrow(CorruptFileError);
    // `_KIND` 2: the second byte of the first record (after `_VERSION` 2, the byte 0x04).
    let firstRecord = -1;
    for await (const block of readAvroBlocks(good, { path: 'm' }))
      if (firstRecord < 0) firstRecord = good.indexOf(block.data.subarray(0, 64));
    expect(good[firstRecord]).toBe(0x04);
    const badKind = Buffer.from(good);
    badKind[firstRecord + 1] = 0x04;
    await expect(walkAll(badKind)).rejects.toThrow(FormatError);
    await expect(walkAll(badKind)).rejects.toThrow(/_KIND 2/);
    await expect(collect(decodeManifestEntries(badKind, 'bad-manifest'))).rejects.toThrow(/_KIND/);
  });
});
