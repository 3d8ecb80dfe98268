// Child process of test/read-parallel.test.ts: reads a table through the shared Parquet worker
// pool and then does nothing more — no close, no exit call. The test asserts that this process
// exits on its own, with code 0 after a good read and with the error's code after a failed one.
// Arguments: the table location, and the columns to read (comma-separated).
import { openTable } from '@tidemark/core';

const [location, columns] = process.argv.slice(2);
const table = await openTable(location);
let rows = 0;
let sum = 0n;
for await (const batch of table.newRead({ columns: columns.split(',') }).batches()) {
  rows += batch.numRows;
  for (const v of batch.getChild('id').toArray()) sum += v;
}
console.log(`read ${rows} rows, sum(id) ${sum}`);
