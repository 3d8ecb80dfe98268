/**
 * The inspect renderers on report objects built here: long timelines fold into columns that fit 100
 * columns, the sparkline and bar primitives scale as documented, and text from the table (partition
 * values, tag names, locations) cannot break out of the HTML.
 */
import { describe, expect, it } from 'vitest';
import { fileSizeBins, type TableReport, type TimelineSnapshot } from '@tidemark/maintenance';
import { INSPECT_TEXT_WIDTH, renderInspectHtml, renderInspectText } from '../src/index.js';
import { bar, sparkline } from '../src/commands/inspect-text.js';

const T0 = Date.UTC(2024, 4, 1);

function snapshot(id: number, kind = 'APPEND', rowsAdded = id, rowsRemoved = 0): TimelineSnapshot {
  return {
    id,
    timeMillis: T0 + id * 60_000,
    kind,
    rowsAdded,
    rowsRemoved,
    filesAdded: 1,
    filesRemoved: rowsRemoved > 0 ? 1 : 0,
    bytesAdded: 1000,
    bytesRemoved: 0,
    totalRecordCount: null,
  };
}

function report(snapshots: TimelineSnapshot[], partition = 'dt=2024-05-01/'): TableReport {
  const bins = fileSizeBins(128 * 1024 * 1024);
  const histogram = bins.map((_, i) => (i === 2 ? 40 : i === 7 ? 2 : 0));
  const byKind: Record<string, number> = {};
  for (const s of snapshots) byKind[s.kind] = (byKind[s.kind] ?? 0) + 1;
  const value = partition.slice(partition.indexOf('=') + 1, -1);
  return {
    version: 1,
    table: `s3://lake/${'deep/'.repeat(30)}db.db/events`,
    generatedAt: new Date(T0).toISOString(),
    generatedAtMillis: T0,
    schemaId: 0,
    primaryKeys: [],
    partitionKeys: ['dt'],
    bucket: 4,
    timeline: {
      retained: snapshots.length + 10,
      earliestSnapshotId: 1,
      latestSnapshotId: snapshots.at(-1)?.id ?? null,
      snapshots,
      omitted: 10,
      byKind,
    },
    tags: [{ name: '<b>release</b>', snapshotId: 3 }],
    liveFiles: { files: 42, bytes: 300 * 1024 * 1024, rows: 1_000_000, deletedRows: 0, partitions: 1, buckets: 4, levels: { '0': 42 } },
    fileSizes: { targetFileSize: 128 * 1024 * 1024, smallFileBytes: 0.7 * 128 * 1024 * 1024, bins, histogram, smallFiles: 40 },
    largestPartitions: [
      {
        partition: { dt: value },
        path: partition,
        files: 42,
        bytes: 300 * 1024 * 1024,
        rows: 1_000_000,
        buckets: 4,
        smallFiles: 40,
        histogram,
      },
    ],
    bucketSkew: [
      {
        partition: { dt: value },
        path: partition,
        buckets: 4,
        ratio: 2.5,
        meanBytes: 75 * 1024 * 1024,
        largest: { bucket: 1, files: 20, bytes: 187.5 * 1024 * 1024, rows: 600_000 },
        sizes: [0, 1, 2, 3].map((b) => ({ bucket: b, files: 10, bytes: (b === 1 ? 187.5 : 37.5) * 1024 * 1024, rows: 100 })),
      },
    ],
    manifests: { count: 12, bytes: 120_000, entries: 60, deleteEntries: 18, listBytes: 2_000 },
    maintenance: {
      expire: { status: 'not-planned', reason: 'retainMin (snapshot.num-retained.min) must be an integer >= 1, got 0' },
      orphans: { status: 'planned', olderThan: new Date(T0 - 86_400_000).toISOString(), files: 3, bytes: 3_000, filesScanned: 100 },
      compaction: {
        status: 'planned',
        mode: 'append',
        files: 40,
        bytes: 40_000_000,
        rows: 900_000,
        windows: 8,
        partitions: 1,
        remainingWindows: 2,
        trigger: { option: 'compaction.min.file-num', value: 5 },
      },
      manifests: { status: 'planned', manifestsToMerge: 12 },
    },
  };
}

const ANSI = /\x1b\[[0-9;]*m/g;

describe('inspect renderers', () => {
  it('sparkline: zero is the lowest block, anything else at least the second, the maximum the full block', () => {
    expect(sparkline([0, 1, 50, 100])).toBe('▁▂▅█'); // 1 + floor(v / max × 7), capped at the full block
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(bar(1, 2, 10)).toBe('█████');
    expect(bar(1, 2, 1)).toBe('▌'); // half a column, in eighths
    expect(bar(1, 1000, 1)).toBe('▏'); // never invisible for a value above zero
    expect(bar(0, 5, 10)).toBe('');
  });

  it('folds a long timeline into columns and keeps every line within 100 columns', () => {
    const snaps = Array.from({ length: 300 }, (_, i) =>
      snapshot(11 + i, i % 50 === 49 ? 'COMPACT' : 'APPEND', 1 + (i % 7), i % 50 === 49 ? 100 : 0),
    );
    for (const colour of [false, true]) {
      const text = renderInspectText(report(snaps), colour).replace(ANSI, '');
      for (const line of text.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(INSPECT_TEXT_WIDTH);
      const strip = /^ {2}commits +([ACOZ]+) \((\d+) per column\)$/m.exec(text);
      expect(strip).not.toBeNull();
      const columns = strip![1]!.length;
      expect(Number(strip![2])).toBe(Math.ceil(300 / columns));
      // Six compactions among 300 commits: each lands in a column of its own.
      expect(strip![1]!.split('').filter((c) => c === 'C')).toHaveLength(6);
      expect(text).toMatch(/timeline shows the newest 300; 10 older not read/);
      expect(text).toMatch(/^ {2}expire +not planned: retainMin/m);
      expect(text).toMatch(/^ {2}compaction +40 files \(38\.1 MiB\) in 8 windows, 1 partition; 2 more in later runs$/m);
      expect(text).toMatch(/^bucket skew +2\.5× in dt=2024-05-01: bucket 1 holds 187\.5 MiB, mean 75\.0 MiB over 4 buckets$/m);
    }
  });

  it('escapes table text in the HTML and keeps the embedded JSON inside its block', () => {
    const evil = 'dt=</script><script>alert(1)</script>&/';
    const html = renderInspectHtml(report([snapshot(1), snapshot(2, 'OVERWRITE', 1, 2)], evil));
    expect(html).not.toContain('<script>alert(1)');
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script type="application/json" id="tidemark-report">']);
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;');
    expect(html).toContain('&lt;b&gt;release&lt;/b&gt;');
    const json = /<script type="application\/json" id="tidemark-report">(.*)<\/script>\n<\/body>/.exec(html)![1]!;
    expect((JSON.parse(json) as TableReport).largestPartitions[0]!.path).toBe(evil);
    expect(html.match(/<g class="snapshot"/g)).toHaveLength(2);
    expect(html.match(/<rect class="bucket"/g)).toHaveLength(4);
    expect(html).toContain('not planned: retainMin');
  });
});
