/**
 * The HTML report of `tidemark inspect` opened in headless Chromium (Debian's `chromium`, which
 * `npm test` installs when missing): the page renders without console errors or requests of any
 * kind, and its charts hold one mark per snapshot, per size bin, per partition and per bucket of
 * the table the test wrote. Without Chromium the test skips with a notice, except in CI
 * (`CI=true`), where it fails.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { FileSystemCatalog, openTable } from '@tidemark/core';
import { compactAppendTable } from '@tidemark/maintenance';
import { findChromium } from './chromium/chromium.mjs';
import { runMain } from './support/cli-main.js';
import { columns } from './support/table-definitions.mjs';

const browserPath = findChromium();
const inCI = process.env['CI'] === 'true';
if (browserPath === undefined && !inCI) {
  console.warn(
    '[tidemark] SKIPPED the HTML report test in headless Chromium: no chromium found (set CHROMIUM_PATH, or run `npm test`, ' +
      "which installs Debian's chromium with apt-get). In CI (CI=true) this test fails instead.",
  );
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('inspect --html in headless Chromium', () => {
  (browserPath !== undefined || inCI ? it : it.skip)(
    'renders without console errors or requests, with one mark per snapshot, size bin, partition and bucket',
    async () => {
      if (browserPath === undefined) throw new Error('CI=true but no chromium is installed: scripts/test.mjs should have installed it');
      const dir = await mkdtemp(join(tmpdir(), 'tidemark-inspect-html-'));
      dirs.push(dir);
      const catalog = new FileSystemCatalog(dir);
      await catalog.createTable('db.events', {
        fields: columns('id INT', 'day STRING'),
        partitionKeys: ['day'],
        options: { bucket: '3', 'bucket-key': 'id', 'compaction.min.file-num': '2' },
      });
      const location = catalog.tableLocation('db.events');
      await catalog.close();
      const table = await openTable(location);
      // 7 APPENDs, 1 OVERWRITE, 1 COMPACT: 9 snapshots, 3 partitions, buckets uneven within each.
      const days = ['2024-05-01', '2024-05-02', '2024-05-03'];
      let id = 0;
      for (let c = 0; c < 7; c++) {
        const rows = Array.from({ length: 5 + c * 3 }, () => ({ id: id++, day: days[c % 3]! }));
        expect((await table.append(rows)).status).toBe('committed');
      }
      await table.overwrite(
        Array.from({ length: 4 }, () => ({ id: id++, day: days[1]! })),
        { partition: { day: days[1]! } },
      );
      const compacted = await compactAppendTable(table, { full: true });
      expect(compacted.snapshotId).toBe(9);

      const html = join(dir, 'report.html');
      const { code, stdout, stderr } = await runMain(['inspect', location, '--html', html, '--json']);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const report = JSON.parse(stdout) as {
        largestPartitions: unknown[];
        bucketSkew: Array<{ sizes: unknown[] }>;
        timeline: { snapshots: unknown[] };
      };
      expect(report.timeline.snapshots).toHaveLength(9);
      expect(report.largestPartitions).toHaveLength(3);
      expect(report.bucketSkew.length).toBeGreaterThan(0);

      const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
        const problems: string[] = [];
        const requests: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
        });
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('request', (r) => requests.push(r.url()));
        const url = pathToFileURL(html).href;
        await page.goto(url, { waitUntil: 'load' });

        expect(problems).toEqual([]);
        expect(requests).toEqual([url]); // the page itself, nothing else
        expect(await page.title()).toContain(location);

        // Marks: one group per snapshot, coloured by kind; 9 bins in every histogram.
        expect(await page.locator('#timeline g.snapshot').count()).toBe(9);
        expect(await page.locator('#timeline g.snapshot[data-kind="APPEND"]').count()).toBe(7);
        expect(await page.locator('#timeline g.snapshot[data-kind="OVERWRITE"]').count()).toBe(1);
        expect(await page.locator('#timeline g.snapshot[data-kind="COMPACT"]').count()).toBe(1);
        expect(await page.locator('#file-sizes rect.bin').count()).toBe(9);
        expect(await page.locator('#file-sizes line.target').count()).toBe(1);
        expect(await page.locator('figure.partition-histogram').count()).toBe(3);
        for (let i = 0; i < 3; i++) expect(await page.locator(`#partition-sizes-${i} rect.bin`).count()).toBe(9);
        expect(await page.locator('#partitions rect.partition').count()).toBe(3);
        const skewCharts = Math.min(3, report.bucketSkew.length);
        for (let i = 0; i < skewCharts; i++) {
          expect(await page.locator(`#buckets-${i} rect.bucket`).count()).toBe(report.bucketSkew[i]!.sizes.length);
        }
        expect(await page.locator('#job-expire, #job-orphans, #job-compact, #job-compact-manifests').count()).toBe(4);

        // Every chart is laid out with a real size, and bars are as tall as the commits were big.
        for (const id of ['timeline', 'file-sizes', 'partitions', 'buckets-0']) {
          const box = await page.locator(`#${id}`).boundingBox();
          expect(box!.width).toBeGreaterThan(100);
          expect(box!.height).toBeGreaterThan(20);
        }
        const heights = await page
          .locator('#timeline g.snapshot rect.added')
          .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
        const added = [5, 8, 11, 14, 17, 20, 23, 4, compacted.rows]; // rows each commit wrote
        expect(heights.indexOf(Math.max(...heights))).toBe(added.indexOf(Math.max(...added)));
        expect(heights[7]! / heights[6]!).toBeCloseTo(4 / 23, 1);
      } finally {
        await browser.close();
      }
    },
  );
});
