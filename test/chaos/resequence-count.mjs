#!/usr/bin/env node
// Counts what the commit's sequence-order guard costs a pipeline: re-sequenced files (rewritten)
// and dropped compactions (redone later). One long-lived committer, as the sink's; a fresh writer
// per checkpoint, as the sink opens after a dropped compaction, continuing from the live files.
// 60 checkpoints of seeded upserts and deletes over 64 keys in 4 buckets, per compaction variant.
// Counts, not times: the figures do not depend on the machine.
//
//   npx turbo run build && node test/chaos/resequence-count.mjs
import { FileSystemCatalog, openTable } from '@tidemark/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { columns } from '../support/table-definitions.mjs';

const variants = {
  'deletion-vectors': { 'deletion-vectors.enabled': 'true', 'num-sorted-run.compaction-trigger': '2' },
  'full-compaction': { 'full-compaction.delta-commits': '1' },
  'lookup-changelog': { 'changelog-producer': 'lookup', 'num-sorted-run.compaction-trigger': '2' },
  universal: { 'num-sorted-run.compaction-trigger': '2' },
};
let seed = 12345;
// A fixed LCG: the same rows on every run and every tree, so two builds compare directly.
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const out = {};
for (const [name, opts] of Object.entries(variants)) {
  const wh = mkdtempSync(join(tmpdir(), 'reseq-count-'));
  const catalog = new FileSystemCatalog(wh);
  await catalog.createTable('db.t', {
    fields: columns('k INT NOT NULL', 'v STRING'),
    primaryKeys: ['k'],
    options: { bucket: '4', ...opts },
  });
  const table = await openTable(catalog.tableLocation('db.t'));
  const commit = table.newCommit({ commitUser: 'p' });
  const live = new Set();
  let reseq = 0,
    dropped = 0,
    checkpoints = 60;
  for (let c = 1; c <= checkpoints; c++) {
    const rows = [];
    const used = new Set();
    for (let i = 0; i < 12; i++) {
      const k = Math.floor(rand() * 64);
      if (used.has(k)) continue;
      used.add(k);
      if (live.has(k) && rand() < 0.35) {
        rows.push({ k, kind: '-D' });
        live.delete(k);
      } else {
        rows.push({ k, v: `v${c}`, kind: '+I' });
        live.add(k);
      }
    }
    const w = table.newBatchWrite({ rowKindField: 'kind' });
    await w.write(rows);
    const messages = await w.prepareCommit();
    await w.close();
    const r = await commit.commit({ identifier: BigInt(c), messages });
    reseq += r.resequencedFiles ?? 0;
    if (r.compactionDropped !== undefined) dropped++;
  }
  const n = (await table.newRead().toArrowTable()).numRows;
  out[name] = { checkpoints, resequencedFiles: reseq, droppedCompactions: dropped, rows: n, expectedRows: live.size };
  rmSync(wh, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 1));
