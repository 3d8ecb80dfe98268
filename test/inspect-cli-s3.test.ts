/**
 * `tidemark inspect` through `main()` on a table on the real S3 server (the CLI resolves S3 from
 * the AWS_* environment, set here from the test server's settings): the JSON report holds the
 * snapshots, files and orphan the test wrote, the summary and the HTML page are produced, and
 * nothing on the store changes. Skips with a notice when no server is configured.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableReport } from '@tidemark/maintenance';
import { s3Available } from './support/s3.js';
import { onS3Table } from './support/table-locations.js';
import { runMain, useCliS3Env } from './support/cli-main.js';
import { columns } from './support/table-definitions.mjs';

const available = s3Available('inspect CLI on S3');
let dir = '';

useCliS3Env();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidemark-inspect-s3-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('inspect on S3', () => {
  (available ? it : it.skip)(
    '--json, the summary and --html describe the table the test wrote, and change nothing',
    async () => {
      await onS3Table(
        'inspect-cli',
        {
          fields: columns('id INT', 'p STRING'),
          partitionKeys: ['p'],
          options: {
            'snapshot.num-retained.min': '2',
            'snapshot.time-retained': '1 ms',
            'compaction.min.file-num': '2',
            'write-only': 'true',
          },
        },
        async (table, io) => {
          const location = table.location;
          // write-only: no expiration after each commit, so the report's expire plan has work to show.
          for (let i = 1; i <= 5; i++) {
            const r = await table.append(Array.from({ length: i }, (_, k) => ({ id: i * 100 + k, p: i % 2 === 0 ? 'even' : 'odd' })));
            expect(r.status).toBe('committed');
          }
          const orphan = `${location}/p=odd/bucket-0/data-orphan-s3.parquet`;
          await io.write(orphan, new Uint8Array(555));
          const idsBefore = await table.snapshotManager.sortedIds();
          const objectsBefore: string[] = [];
          for await (const st of io.list(location, { recursive: true })) objectsBefore.push(st.path);

          // S3 sets lastModified itself, so the orphan is young: --older-than 0s (now) counts it.
          const json = await runMain(['inspect', location, '--json', '--older-than', '0s']);
          expect(json.code, json.stderr).toBe(0);
          const report = JSON.parse(json.stdout) as TableReport;
          expect(report.table).toBe(location);
          expect(report.timeline.snapshots.map((s) => s.rowsAdded)).toEqual(idsBefore.map((id) => id));
          expect(report.liveFiles).toMatchObject({ files: idsBefore.length, rows: 15, partitions: 2 });
          expect(report.largestPartitions.map((p) => [p.path, p.files]).sort()).toEqual([
            ['p=even/', 2],
            ['p=odd/', 3],
          ]);
          const m = report.maintenance!;
          expect(m.orphans).toMatchObject({ status: 'planned', files: 1, bytes: 555 });
          expect(m.compaction).toMatchObject({ status: 'planned', files: 5, windows: 2 });
          // Retention 2 snapshots, 1 ms: everything but the newest two would expire.
          expect(m.expire).toMatchObject({ status: 'planned', snapshots: idsBefore.length - 2, toSnapshotId: idsBefore.at(-3) });

          const html = join(dir, 'report.html');
          const text = await runMain(['inspect', location, '--html', html, '--older-than', '0s']);
          expect(text.code, text.stderr).toBe(0);
          expect(text.stdout).toMatch(/^ {2}orphans +1 file, 555 B, older than /m);
          expect(text.stdout).toMatch(new RegExp(`^ {2}compaction +5 files \\(.*\\) in 2 windows, 2 partitions$`, 'm'));
          const page = await readFile(html, 'utf8');
          expect(page.match(/<g class="snapshot"/g)).toHaveLength(idsBefore.length);

          // Read-only: the same snapshots and objects afterwards.
          expect(await table.snapshotManager.sortedIds()).toEqual(idsBefore);
          const objectsAfter: string[] = [];
          for await (const st of io.list(location, { recursive: true })) objectsAfter.push(st.path);
          expect(objectsAfter.sort()).toEqual(objectsBefore.sort());
        },
      );
    },
    300_000,
  );
});
