#!/usr/bin/env node
/**
 * `npm run demo`: the main job of tidemark on a local warehouse, step by step.
 *
 * Creates ./demo-warehouse (wiped first), a partitioned append table, writes several commits,
 * tags one, reads older versions back by snapshot id, timestamp and tag, and shows the CLI's
 * `snapshots` and `read` output. Installs dependencies and builds the packages first when they
 * are missing (a fresh clone).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = join(root, 'packages/cli/bin/tidemark.js');
// A fresh clone has no node_modules yet: install exactly what the lockfile says first.
if (!existsSync(join(root, 'node_modules', 'apache-arrow'))) {
  console.log('Installing dependencies first (npm ci)…');
  execFileSync('npm', [existsSync(join(root, 'package-lock.json')) ? 'ci' : 'install', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
  });
}
const needBuild = ['storage', 'format', 'core', 'cli'].some((p) => !existsSync(join(root, 'packages', p, 'dist/index.js')));
if (needBuild) {
  console.log('Building the packages first (npx turbo run build)…');
  execFileSync('npx', ['turbo', 'run', 'build'], { cwd: root, stdio: 'inherit' });
}

const { FileSystemCatalog } = await import(pathToFileURL(join(root, 'packages/core/dist/index.js')).href);
// The CLI's jsonl formatter prints decimals, timestamps and BIGINTs exactly.
const { createRowFormatter } = await import(pathToFileURL(join(root, 'packages/cli/dist/index.js')).href);

const warehouse = join(process.cwd(), 'demo-warehouse');
let step = 0;
const say = (text) => console.log(`\n\x1b[1m${++step}. ${text}\x1b[0m`);
const tidemark = (...args) => {
  console.log(`$ tidemark ${args.map((a) => (/[\s'"]/.test(a) ? `'${a}'` : a)).join(' ')}`);
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  process.stdout.write(r.stdout);
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    throw new Error(`tidemark ${args[0]} failed with exit code ${r.status}`);
  }
  return r.stdout;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Prints an Arrow Table one JSON line per row, as `tidemark read --format jsonl` would. */
const show = (arrowTable) => {
  const types = table.schema().fields.map((f) => f.type);
  const formatter = createRowFormatter(arrowTable.schema, types);
  for (const batch of arrowTable.batches) for (let r = 0; r < batch.numRows; r++) console.log('   ', formatter.formatJsonLine(batch, r));
};

say(`Fresh warehouse at ${relative(process.cwd(), warehouse) || warehouse}`);
rmSync(warehouse, { recursive: true, force: true });
const catalog = new FileSystemCatalog(warehouse);

say('Create table shop.orders, partitioned by day');
await catalog.createTable('shop.orders', {
  fields: [
    { name: 'order_id', type: 'BIGINT NOT NULL' },
    { name: 'customer', type: 'STRING' },
    { name: 'amount', type: 'DECIMAL(10, 2)' },
    { name: 'created_at', type: 'TIMESTAMP(3)' },
    { name: 'day', type: 'STRING NOT NULL' },
  ],
  partitionKeys: ['day'],
});
const table = await catalog.getTable('shop.orders');
const location = table.location;
console.log(`    schema-0 written to ${relative(process.cwd(), location)}/schema/schema-0`);

const batches = [
  [
    { order_id: 1n, customer: 'ada', amount: '12.50', created_at: '2024-05-01T09:00:00.000', day: '2024-05-01' },
    { order_id: 2n, customer: 'bob', amount: '7.25', created_at: '2024-05-01T09:30:00.000', day: '2024-05-01' },
  ],
  [
    { order_id: 3n, customer: 'cy', amount: '99.99', created_at: '2024-05-02T10:00:00.000', day: '2024-05-02' },
    { order_id: 4n, customer: 'ada', amount: '3.10', created_at: '2024-05-02T11:15:00.000', day: '2024-05-02' },
  ],
  [{ order_id: 5n, customer: 'dee', amount: '45.00', created_at: '2024-05-03T08:45:00.000', day: '2024-05-03' }],
];
const commitTimes = [];
for (const [i, rows] of batches.entries()) {
  say(`Commit ${i + 1}: append ${rows.length} row(s) for ${rows[0].day}${i === 1 ? ", then tag it 'after-day-2'" : ''}`);
  const result = await table.append(rows);
  console.log(`    -> ${result.status} snapshot ${result.snapshotId}`);
  commitTimes.push((await table.snapshotManager.snapshot(result.snapshotId)).timeMillis);
  if (i === 1) {
    await table.createTag('after-day-2');
    console.log("    tagged snapshot 2 as 'after-day-2'");
  }
  await sleep(20); // distinct commit times, so the timestamp read below is unambiguous
}

say('Commit 4: overwrite partition day=2024-05-02 (order 4 was cancelled)');
const ow = await table.overwrite([batches[1][0]], { partition: { day: '2024-05-02' } });
console.log(`    -> ${ow.status} snapshot ${ow.snapshotId} (OVERWRITE)`);

say('Latest version (snapshot 4)');
show(await table.newRead().toArrowTable());

say('Time travel by snapshot id: snapshot 1');
show(await table.newRead({ snapshotId: 1 }).toArrowTable());

const at = new Date(commitTimes[1] + 5).toISOString();
say(`Time travel by timestamp: the table as of ${at} (just after commit 2)`);
const byTime = table.newRead({ timestamp: at });
console.log(`    resolves to snapshot ${(await byTime.snapshot()).id}`);
show(await byTime.toArrowTable());

say("Time travel by tag 'after-day-2', only day 2024-05-02 (order 4 is still there)");
show(await table.newRead({ tag: 'after-day-2', where: "day = '2024-05-02'" }).toArrowTable());

say('The CLI: every snapshot, with its kind, commit user and record counts');
tidemark('snapshots', location);
say("The CLI: tag 'after-day-2' as a table, every day");
tidemark('read', location, '--tag', 'after-day-2', '--format', 'table');
say('The CLI: snapshot 1 as JSON lines');
tidemark('read', location, '--snapshot', '1', '--format', 'jsonl');
say('The CLI: the data files of the latest snapshot');
tidemark('files', location);

await catalog.close();
console.log(`\nDone. Explore further with: npx tidemark read ${relative(process.cwd(), location)} --format table`);
