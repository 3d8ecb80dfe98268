// Test double for ParquetEncodePool: the real worker, except that a job whose createdBy is
// 'throw' raises an uncaught exception and one whose createdBy is 'exit' ends the thread.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (job) => {
  if (job.settings.createdBy === 'throw') throw new Error('simulated worker crash');
  if (job.settings.createdBy === 'exit') process.exit(7);
});
await import('../../worker/parquet-encode-worker.mjs');
