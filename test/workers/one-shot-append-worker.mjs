// Child process of test/one-shot-append.test.ts: another process's one-shot write to a table
// that the test process holds open. Imports the packages from dist (build first).
// Configuration comes as one JSON argument: { root, rows: [...], s3? }. Prints the commit result as JSON.
import { LocalFileIO, S3FileIO } from '@tidemark/storage';
import { openTable } from '@tidemark/core';

const config = JSON.parse(process.argv[2] ?? '{}');
const io = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
let failed = false;
try {
  const table = await openTable(config.root, { fileIO: io });
  process.stdout.write(`${JSON.stringify(await table.append(config.rows))}\n`);
} catch (e) {
  failed = true;
  process.stderr.write(`${e?.stack ?? e}\n`);
} finally {
  await io.close();
}
// The shared Parquet encode workers would keep the process alive.
process.stdout.write('', () => process.exit(failed ? 1 : 0));
