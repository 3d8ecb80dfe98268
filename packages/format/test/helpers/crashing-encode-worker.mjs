// Test double for ParquetEncodePool: the real worker, except that a job whose createdBy is
// 'throw' raises an uncaught exception and one whose createdBy is 'exit' ends the thread.
import { parentPort } from 'node:worker_threads';

// Wrap the real worker's message handler (no listener is attached before it, so none is missed).
const on = parentPort.on.bind(parentPort);
parentPort.on = (event, handler) =>
  on(
    event,
    event !== 'message'
      ? handler
      : (job) => {
          if (job.settings?.createdBy === 'throw') throw new Error('simulated worker crash');
          if (job.settings?.createdBy === 'exit') process.exit(7);
          handler(job);
        },
  );
await import('../../worker/parquet-worker.mjs');
