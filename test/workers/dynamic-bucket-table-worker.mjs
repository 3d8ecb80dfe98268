// Child process of test/dynamic-bucket-concurrency.test.ts (table API part), run against the built
// packages (the Parquet encode pool needs its worker file next to the library): `rounds` times,
// upserts a random batch of keys drawn from a key space shared with the other workers into one
// partition of a dynamic-bucket primary-key table with `table.append`, which re-plans by itself
// when a concurrent commit placed one of its new keys first. Each snapshot records the keys and
// value it wrote in its properties. Argument: one JSON `{ root, worker, rounds, batch, keySpace, s3? }`.
// Prints one JSON line per commit.
import { LocalFileIO, S3FileIO } from '@tidemark/storage';
import { openTable } from '@tidemark/core';

const config = JSON.parse(process.argv[2] ?? '{}');
const io = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
try {
  const table = await openTable(config.root, { fileIO: io });
  for (let round = 1; round <= config.rounds; round++) {
    const keys = new Set();
    while (keys.size < config.batch) keys.add(Math.floor(Math.random() * config.keySpace));
    const value = `w${config.worker}-r${round}`;
    const rows = [...keys].map((k) => ({ k, dt: 'p', v: value }));
    const result = await table.append(rows, { expire: false, properties: { keys: JSON.stringify([...keys]), value } });
    process.stdout.write(`${JSON.stringify({ worker: config.worker, round, result })}\n`);
  }
  await table.close();
  await io.close();
} catch (e) {
  process.stderr.write(`${e?.stack ?? String(e)}\n`);
  process.exit(1);
}
