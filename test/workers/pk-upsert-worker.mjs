// Child process of test/concurrent-pk-writes.test.ts: makes `commits` commits of upserts and
// deletes to one primary-key table, each with a fresh writer (so its sequence numbers continue
// from the snapshot it started on, as separate jobs do), and a random pause between writing and
// committing so that the processes overlap. A dynamic-bucket conflict is answered by writing again. Imports the packages from dist (build first).
// Configuration comes as one JSON argument: { root, worker, commits, keys, perCommit, seed, s3? }.
// Prints one JSON line per commit: { worker, commit, result, rows: [[k, v | null], ...] }.
import { DynamicBucketConflictError, openTable } from '@tidemark/core';
import { seededRandom as rng } from '../support/seeded-random.mjs';
import { workerMain } from './worker-main.mjs';

await workerMain(async (config, io) => {
  const rand = rng(config.seed ?? config.worker + 1);
  const table = await openTable(config.root, { fileIO: io });
  const user = `worker-${config.worker}`;
  for (let c = 1; c <= config.commits; c++) {
    const keys = new Set();
    while (keys.size < config.perCommit) keys.add(Math.floor(rand() * config.keys));
    const rows = [];
    const reported = [];
    for (const k of keys) {
      if (rand() < 0.15) {
        rows.push({ k, v: null, w: config.worker, c, op: '-D' });
        reported.push([k, null]);
      } else {
        const v = `w${config.worker}-c${c}-k${k}`;
        rows.push({ k, v, w: config.worker, c, op: rand() < 0.5 ? '+U' : '+I' });
        reported.push([k, v]);
      }
    }
    let result;
    for (let attempt = 1; result === undefined; attempt++) {
      const writer = table.newBatchWrite({ rowKindField: 'op' });
      try {
        await writer.write(rows);
        const messages = await writer.prepareCommit();
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 40)));
        result = await table.newCommit({ commitUser: user }).commit({ identifier: BigInt(c), messages });
      } catch (e) {
        // Dynamic buckets: another process placed one of our new keys first; write again against
        // the latest snapshot, as the error asks (Table.append does the same).
        if (!(e instanceof DynamicBucketConflictError) || attempt >= 20) throw e;
        await writer.abort();
      } finally {
        await writer.close();
      }
    }
    process.stdout.write(`${JSON.stringify({ worker: config.worker, commit: c, result, rows: reported })}\n`);
  }
});
