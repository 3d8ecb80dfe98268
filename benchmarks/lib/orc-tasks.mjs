/**
 * Child-process tasks of benchmarks/orc.bench.mjs (each measurement runs in a fresh process):
 * `prepare` writes a Parquet copy of an ORC file with tidemark's Parquet writer; `read-orc` and
 * `read-parquet` stream a file through tidemark's data-file readers (the ones table reads use),
 * all columns or the listed ones, and report rows and milliseconds.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { readOrcFile, readParquetFile, writeParquetFile } from '@tidemark/format';
import { LocalFileIO } from '@tidemark/storage';
import { childMain } from './measure.mjs';

/** Touches every column of a batch so lazily materialised data would be paid for too. */
function touch(batch) {
  let n = 0;
  for (const child of batch.data.children) n += child.length;
  return n;
}

async function read(reader, args) {
  const io = new LocalFileIO();
  const options = args.columns ? { columns: args.columns } : {};
  const t0 = performance.now();
  let rows = 0;
  let cells = 0;
  for await (const batch of reader(io, args.file, options)) {
    rows += batch.numRows;
    cells += touch(batch);
  }
  return { ms: performance.now() - t0, rows, cells };
}

await childMain({
  async prepare(args) {
    const io = new LocalFileIO();
    const batches = [];
    for await (const batch of readOrcFile(io, args.orc)) batches.push(batch);
    const bytes = writeParquetFile(batches, { compression: 'zstd' });
    mkdirSync(path.dirname(args.parquet), { recursive: true });
    writeFileSync(args.parquet, bytes);
    return { rows: batches.reduce((n, b) => n + b.numRows, 0), parquetBytes: statSync(args.parquet).size };
  },
  'read-orc': (args) => read(readOrcFile, args),
  'read-parquet': (args) => read(readParquetFile, args),
});
