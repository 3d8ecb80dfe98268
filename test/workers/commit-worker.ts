/**
 * Child process of test/concurrent-commits.test.ts: makes `commits` commits to one table, each
 * adding one data file record named after the worker and the commit number. Bundled to plain JS
 * by the test before it is spawned. Configuration comes as one JSON argument:
 * `{ root, worker, commits, s3?: S3Options }`. Prints one JSON line per commit.
 */
import { LocalFileIO, S3FileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { EMPTY_SIMPLE_STATS, serializeBinaryRow, type DataFileMeta } from '@tidemark/format';
import { FileStoreCommit, SchemaManager, TablePaths } from '@tidemark/core';

interface WorkerConfig {
  readonly root: string;
  readonly worker: number;
  readonly commits: number;
  readonly s3?: S3Options;
}

function file(name: string, rowCount: number): DataFileMeta {
  return {
    fileName: name,
    fileSize: 100,
    rowCount,
    minKey: EMPTY_SIMPLE_STATS.minValues,
    maxKey: EMPTY_SIMPLE_STATS.maxValues,
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: EMPTY_SIMPLE_STATS,
    minSequenceNumber: 0n,
    maxSequenceNumber: 0n,
    schemaId: 0,
    level: 0,
    extraFiles: [],
    creationTime: Date.now(),
    deleteRowCount: 0,
    embeddedIndex: null,
    fileSource: 0,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const io: FileIO = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
  if (io instanceof S3FileIO) await io.verifyConditionalWrites(config.root);
  const paths = new TablePaths(config.root);
  const schema = await new SchemaManager(io, paths).latest();
  const commit = new FileStoreCommit(io, paths, schema);
  const partition = serializeBinaryRow([], []);
  const user = `worker-${config.worker}`;
  for (let i = 1; i <= config.commits; i++) {
    const name = `data-w${config.worker}-c${i}.parquet`;
    const result = await commit.commit(
      { identifier: BigInt(i), messages: [{ partition, bucket: 0, totalBuckets: -1, newFiles: [file(name, 1)] }] },
      { commitUser: user },
    );
    process.stdout.write(`${JSON.stringify({ worker: config.worker, commit: i, result })}\n`);
  }
  await io.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
