// Child process of test/one-shot-append.test.ts: another process's one-shot write to a table
// that the test process holds open. Imports the packages from dist (build first).
// Configuration comes as one JSON argument: { root, rows: [...], s3? }. Prints the commit result as JSON.
import { openTable } from '@tidemark/core';
import { workerMain } from './worker-main.mjs';

await workerMain(async (config, io) => {
  const table = await openTable(config.root, { fileIO: io });
  process.stdout.write(`${JSON.stringify(await table.append(config.rows))}\n`);
});
