import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { APPENDIX_A_INDEX_MANIFEST } from './appendix-a.js';
import { fixtureFiles } from './fixtures.js';
import { readAvroHeader, readAvroRecords } from '../src/avro-container.js';
import { CorruptFileError } from '../src/errors.js';
import { decodeHashIndex, encodeHashIndex, hashIndexFileMeta, indexFileName, indexManifestEntryOf, keyHash } from '../src/hash-index.js';
import { INDEX_TYPE_HASH, decodeIndexManifest, readIndexManifest, writeIndexManifest } from '../src/index-manifest.js';
import { parseTypeString as parseDataType } from '../src/type-json.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const localIO = { read: async (p: string): Promise<Uint8Array> => new Uint8Array(readFileSync(p)) };

describe('hash index files', () => {
  it('are bare big-endian int32 hashes, in the given order', () => {
    const bytes = encodeHashIndex([1, -1, 0x12345678, -300363099]);
    expect(Buffer.from(bytes).toString('hex')).toBe('00000001' + 'ffffffff' + '12345678' + 'ee18d2a5');
    expect([...decodeHashIndex(bytes, 'x', 4)]).toEqual([1, -1, 0x12345678, -300363099]);
    expect(encodeHashIndex([]).length).toBe(0);
    expect(decodeHashIndex(new Uint8Array(0), 'empty').length).toBe(0);
  });

  it('key hashes are BinaryRow hashes of the trimmed key, as Java assigns them', () => {
    // Values Java computed for BinaryRow.hashCode() of one-column rows.
    expect(keyHash([parseDataType('INT')], [0])).toBe(-300363099);
    expect(keyHash([parseDataType('INT')], [1])).toBe(1465514398);
    expect(keyHash([parseDataType('STRING')], ['Alice'])).toBe(1285337400);
  });

  it('rejects truncated files and row-count mismatches with the file named', () => {
    expect(() => decodeHashIndex(new Uint8Array(7), 'index/index-a-0')).toThrow(CorruptFileError);
    expect(() => decodeHashIndex(new Uint8Array(7), 'index/index-a-0')).toThrow(/index\/index-a-0.*multiple of 4/);
    expect(() => decodeHashIndex(new Uint8Array(8), 'index/index-a-1', 3)).toThrow(/_ROW_COUNT 3/);
  });

  it('index file names follow index-<uuid>-<n>', () => {
    expect(indexFileName('16bec1d6-0000-4000-8000-000000000000', 2)).toBe('index-16bec1d6-0000-4000-8000-000000000000-2');
  });
});

describe('HASH index manifest entries', () => {
  const javaIndexManifests = fixtureFiles('manifest', /^index-manifest-/);

  it('carry the fields Java sets for HashIndexFile.write (type HASH, no ranges, no global index)', async () => {
    const meta = hashIndexFileMeta('index-u-0', 12, 3);
    const partition = Uint8Array.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0]);
    const entries = [
      indexManifestEntryOf('ADD', partition, 4, meta),
      indexManifestEntryOf('DELETE', partition, 4, hashIndexFileMeta('index-u-9', 8, 2)),
    ];
    const bytes = await writeIndexManifest(entries);
    // Writer schema = the schema Java 1.4 writes (Appendix A.3).
    expect((await readAvroHeader(bytes, { path: 'hash-index-manifest' })).schemaText).toBe(APPENDIX_A_INDEX_MANIFEST);
    const records = await collect(readAvroRecords(bytes, { path: 'hash-index-manifest' }));
    const r = records[0]!;
    expect(Object.keys(r)).toEqual([
      '_VERSION',
      '_KIND',
      '_PARTITION',
      '_BUCKET',
      '_INDEX_TYPE',
      '_FILE_NAME',
      '_FILE_SIZE',
      '_ROW_COUNT',
      '_DELETIONS_VECTORS_RANGES',
      '_EXTERNAL_PATH',
      '_GLOBAL_INDEX',
    ]);
    expect([r._VERSION, r._KIND, r._BUCKET, r._INDEX_TYPE, r._FILE_NAME, Number(r._FILE_SIZE), Number(r._ROW_COUNT)]).toEqual([
      1,
      0,
      4,
      'HASH',
      'index-u-0',
      12,
      3,
    ]);
    expect([r._DELETIONS_VECTORS_RANGES, r._EXTERNAL_PATH, r._GLOBAL_INDEX]).toEqual([null, null, null]);
    expect(records[1]!._KIND).toBe(1);
    expect(await decodeIndexManifest(bytes, 'x')).toEqual(entries);
  });

  it.skipIf(javaIndexManifests.length === 0)(
    'match a Java-written index manifest field by field, apart from the DV ranges of its DV entries',
    async () => {
      for (const path of javaIndexManifests) {
        const java = await readIndexManifest(localIO, path);
        const javaRecords = await collect(readAvroRecords(readFileSync(path), { path }));
        // Rebuild each Java entry as a HASH entry through the writer API and compare every field
        // with the Java record except the type-specific ones.
        const ours = java.map((e) =>
          indexManifestEntryOf(e.kind, e.partition, e.bucket, {
            ...hashIndexFileMeta(e.fileName, e.fileSize, e.rowCount, e.externalPath),
            indexType: e.indexType,
          }),
        );
        const records = await collect(readAvroRecords(await writeIndexManifest(ours), { path: `rewritten ${basename(path)}` }));
        expect(records.length).toBe(javaRecords.length);
        records.forEach((r, i) => {
          const j = javaRecords[i]!;
          for (const field of [
            '_VERSION',
            '_KIND',
            '_PARTITION',
            '_BUCKET',
            '_INDEX_TYPE',
            '_FILE_NAME',
            '_FILE_SIZE',
            '_ROW_COUNT',
            '_EXTERNAL_PATH',
          ]) {
            expect(r[field], `${basename(path)} record ${i} ${field}`).toEqual(j[field] ?? null);
          }
          expect(r._DELETIONS_VECTORS_RANGES).toBeNull();
        });
        expect(java.every((e) => e.kind === 'ADD')).toBe(true);
        expect(INDEX_TYPE_HASH).toBe('HASH');
      }
    },
  );
});
