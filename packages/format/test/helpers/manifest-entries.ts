/**
 * Manifest entries for the decoder and walker tests: the Java-written data manifests of the
 * fixtures, random entries with every optional field, and entries as plain comparable values.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeBinaryRow } from '../../src/binary-row.js';
import { newDataFileMeta, type ManifestEntry } from '../../src/manifest-entry.js';
import type { SimpleStats } from '../../src/manifest-fields.js';
import type { DataType } from '../../src/types.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const FIXTURE_DIRS = ['paimon', 'paimon-orc'].map((d) => join(REPO_ROOT, '../shared/fixtures', d));

/** Every data manifest (not list, not index manifest) under the Java-written fixture tables. */
export function javaManifests(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, name.name);
      if (name.isDirectory()) walk(p);
      else if (basename(dir) === 'manifest' && /^manifest-(?!list-)/.test(name.name)) out.push(p);
    }
  };
  for (const d of FIXTURE_DIRS) if (existsSync(d)) walk(d);
  return out;
}

export const hex = (b: Uint8Array | null): string | null =>
  b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const plainStats = (s: SimpleStats) => ({
  min: hex(s.minValues),
  max: hex(s.maxValues),
  nulls: s.nullCounts === null ? null : [...s.nullCounts],
});

/** Every field of an entry as plain comparable values (bytes as hex, stats materialised). */
export function plain(e: ManifestEntry): unknown {
  const f = e.file;
  return {
    kind: e.kind,
    partition: hex(e.partition),
    bucket: e.bucket,
    totalBuckets: e.totalBuckets,
    file: {
      ...f,
      minKey: hex(f.minKey),
      maxKey: hex(f.maxKey),
      keyStats: plainStats(f.keyStats),
      valueStats: plainStats(f.valueStats),
      embeddedIndex: hex(f.embeddedIndex),
    },
    fileKeys: Object.keys(f),
    keys: Object.keys(e),
  };
}

export async function collect(it: AsyncIterable<ManifestEntry>): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const PARTITION_TYPES: DataType[] = [
  { root: 'INT', nullable: true },
  { root: 'VARCHAR', nullable: true, length: 100 },
  { root: 'DECIMAL', nullable: true, precision: 20, scale: 2 },
];

export function randomEntry(rng: () => number, i: number, emptyKeys = rng() < 0.5): ManifestEntry {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  const partition = serializeBinaryRow(PARTITION_TYPES, [
    rng() < 0.2 ? null : pick([1, 2, -7]),
    rng() < 0.2 ? null : pick(['a', 'long-partition-value-xyz', 'ü']),
    rng() < 0.2 ? null : { unscaled: pick([12345n, -1n, 10n ** 19n]), scale: 2 },
  ]);
  const row = (): Uint8Array =>
    serializeBinaryRow(PARTITION_TYPES, [Math.floor(rng() * 1e6), `s${Math.floor(rng() * 1e9)}`, { unscaled: 99n, scale: 2 }]);
  const stats = (): SimpleStats => ({ minValues: row(), maxValues: row(), nullCounts: pick([null, [0, 1, null], [3, 0, 0]]) });
  const opt = <T>(v: T): T | null => (rng() < 0.5 ? null : v);
  return {
    kind: rng() < 0.8 ? 'ADD' : 'DELETE',
    partition,
    bucket: pick([0, 1, 2, -1]),
    totalBuckets: pick([-1, 4]),
    file: newDataFileMeta({
      fileName: `data-${i}-${Math.floor(rng() * 1e9)}.parquet`,
      fileSize: Math.floor(rng() * 2 ** 40),
      rowCount: Math.floor(rng() * 1e7),
      schemaId: pick([0, 1, 3]),
      level: pick([0, 1, 5]),
      minSequenceNumber: BigInt(Math.floor(rng() * 1e6)),
      maxSequenceNumber: pick([2n ** 62n, 2n ** 53n + 1n, 7n]),
      ...(emptyKeys ? {} : { minKey: row(), maxKey: row(), keyStats: stats() }),
      valueStats: stats(),
      extraFiles: rng() < 0.2 ? [`x-${i}.index`, 'ü.idx'] : [],
      creationTime: opt(1_700_000_000_000 + i),
      deleteRowCount: opt(Math.floor(rng() * 100)),
      embeddedIndex: opt(new Uint8Array([1, 2, 3, i & 0xff])),
      fileSource: opt(pick([0, 1])),
      valueStatsCols: opt(['a', 'b']),
      externalPath: opt(`s3://bucket/x/data-${i}.parquet`),
      firstRowId: opt(Math.floor(rng() * 2 ** 50)),
      writeCols: opt(['a']),
    }),
  };
}
