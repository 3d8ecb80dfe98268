/**
 * Child process of test/dynamic-bucket-concurrency.test.ts: in `rounds` commits, assigns dynamic
 * buckets to a random batch of keys drawn from a small key space shared with the other workers
 * (so new keys overlap), writes the buckets' hash index files and commits them (index-only
 * messages, one per touched bucket). On a DynamicBucketConflictError it re-plans against the latest
 * snapshot, as the table write path does. Each snapshot records its key -> bucket assignment in
 * its `properties`. Config: one JSON argument
 * `{ root, worker, workers, rounds, batch, keySpace, s3? }`; the table sets `dynamic-bucket.target-row-num`.
 */
import { LocalFileIO, S3FileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { keyHash, parseTypeString, serializeBinaryRow } from '@tidemark/format';
import {
  DynamicBucketAssigner,
  DynamicBucketConflictError,
  FileStoreCommit,
  SchemaManager,
  SnapshotManager,
  metadataPaths,
  tableContext,
  withHashIndexChanges,
  type CommitMessage,
} from '@tidemark/core';

interface WorkerConfig {
  readonly root: string;
  readonly worker: number;
  readonly rounds: number;
  readonly batch: number;
  readonly keySpace: number;
  /** Number of workers: the first round waits until all of them planned against the empty table. */
  readonly workers: number;
  readonly s3?: S3Options;
}

/** Waits until every worker wrote its marker, so that all first commits race with the same base. */
async function barrier(io: FileIO, root: string, worker: number, workers: number): Promise<void> {
  const dir = `${root}/barrier`;
  await io.write(`${dir}/w${worker}`, new Uint8Array(0));
  for (;;) {
    let n = 0;
    for await (const _ of io.list(dir)) n++;
    if (n >= workers) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const io: FileIO = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
  if (io instanceof S3FileIO) await io.verifyConditionalWrites(config.root);
  const schema = await new SchemaManager(io, metadataPaths(config.root)).latest();
  const ctx = tableContext(io, config.root, schema);
  const commit = new FileStoreCommit(ctx, { commitOptions: { maxRetries: 100, minRetryWaitMs: 5, maxRetryWaitMs: 100 } });
  const snapshots = new SnapshotManager(io, ctx.paths);
  const partition = serializeBinaryRow([parseTypeString('STRING')], ['p']);
  const keyType = [parseTypeString('INT NOT NULL')];
  const user = `worker-${config.worker}`;
  let replans = 0;
  for (let round = 1; round <= config.rounds; round++) {
    const keys = new Set<number>();
    while (keys.size < config.batch) keys.add(Math.floor(Math.random() * config.keySpace));
    for (;;) {
      const assigner = DynamicBucketAssigner.forTable(ctx, await snapshots.latest());
      await assigner.load(partition);
      const assignment: Record<number, number> = {};
      const buckets = new Set<number>();
      for (const k of keys) {
        const b = await assigner.assign(partition, keyHash(keyType, [k]));
        assignment[k] = b;
        buckets.add(b);
      }
      // Index-only messages: the data side of the same flow is covered by the table API part.
      const messages: CommitMessage[] = [...buckets].map((b) => ({ partition, bucket: b, totalBuckets: -1, newFiles: [] }));
      const prepared = withHashIndexChanges(messages, await assigner.prepareIndexFiles(), assigner.baseSnapshotId);
      if (round === 1 && replans === 0) await barrier(io, config.root, config.worker, config.workers);
      try {
        const result = await commit.commit(
          {
            identifier: BigInt(round),
            messages: prepared,
            properties: { assignment: JSON.stringify(assignment) },
          },
          // force: a round of known keys only has no index change but still records its assignment.
          { commitUser: user, force: true },
        );
        process.stdout.write(`${JSON.stringify({ worker: config.worker, round, result, replans })}\n`);
        break;
      } catch (e) {
        if (!(e instanceof DynamicBucketConflictError)) throw e;
        replans++;
        await assigner.deleteWrittenIndexFiles();
      }
    }
  }
  await io.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
