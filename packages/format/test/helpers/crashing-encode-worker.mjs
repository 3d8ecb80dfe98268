// Test double for ParquetWorkerPool: the real worker, except that an encode job whose createdBy is
// 'throw' raises an uncaught exception, one whose createdBy is 'exit' ends the thread, and a decode
// job with batchSize 7777 raises an uncaught exception.
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
          if (job.kind === 'decode' && job.batchSize === 7777) throw new Error('simulated decoder crash');
          handler(job);
        },
  );
await import('../../worker/parquet-worker.mjs');
