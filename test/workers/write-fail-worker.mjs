// Child process of test/cli-exit.test.ts: uses the library the way a service does — writes rows
// (so a Parquet encode worker starts and encodes), hits a validation error, aborts and closes the
// writer and the table — and then does nothing more. The test asserts that this process exits on
// its own: nothing the library started may keep it alive. Argument: a warehouse directory.
import { FileSystemCatalog, openTable, WriteValidationError } from '@tidemark/core';
import { columns } from '../support/table-definitions.mjs';

/** Writes a row that fails validation, prints what was thrown, then aborts and closes `writer`. */
async function failValidationAndClose(writer) {
  try {
    await writer.write([{ id: 'abc', p: 'a' }]);
    console.log('no error');
  } catch (e) {
    console.log(e instanceof WriteValidationError ? `validation error: ${e.message}` : `other error: ${e}`);
  }
  await writer.abort();
  await writer.close();
}

const [warehouse, mode] = process.argv.slice(2);
const catalog = new FileSystemCatalog(warehouse);
await catalog.createTable('db.t', {
  fields: columns('id BIGINT NOT NULL', 'p STRING'),
  partitionKeys: ['p'],
});
const table = await openTable(`${warehouse}/db.db/t`);
if (mode === 'early') {
  // The encode pool has started a worker; no file was encoded yet.
  await failValidationAndClose(table.newBatchWrite());
} else {
  // A tiny memory budget makes the first write encode a data file on a pool worker.
  const writer = table.newBatchWrite({ memoryBudget: 1024 });
  await writer.write(Array.from({ length: 2000 }, (_, i) => ({ id: BigInt(i), p: 'a' })));
  await failValidationAndClose(writer);
}
await table.close();
console.log('closed');
