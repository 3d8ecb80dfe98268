/**
 * A manifest upload that fails while the commit is still encoding its manifest list: the commit
 * fails (or retries) with that error, and the failed upload never surfaces as an unhandled
 * promise rejection. The `tidemark` binary ends the process on an unhandled rejection ("unexpected
 * error (unhandled rejection)"), so a single failed PUT used to kill a `write` or an `ingest` in the
 * middle of its commit instead of reaching the commit loop. Found by the Kafka offsets model test
 * (packages/sink/test/kafka-offsets-model.test.ts), which fails storage requests at random.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';
import { createTestTable, dataFile, message } from './commit-helpers.js';

describe('a failed manifest upload during a commit', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('fails the commit with the upload error and leaves no unhandled rejection', async () => {
    let failed = 0;
    // The data manifest's upload fails at once; the manifest list is encoded meanwhile.
    const io = instrumentFileIO(new MemoryFileIO(), {
      async before(r) {
        if (r.method === 'write' && /\/manifest\/manifest-[0-9a-f-]+-\d+$/.test(r.path ?? '') && !r.path!.includes('manifest-list')) {
          failed++;
          throw new Error(`PUT ${r.path} failed: 503 Slow Down`);
        }
      },
    });
    const t = await createTestTable({ io });
    const outcome = await t.commit
      .commit({ identifier: 1n, messages: [message('a', { newFiles: [dataFile(1)] })] }, { commitUser: 'u' })
      .then(
        () => 'committed',
        (e: Error) => e.message,
      );
    // Let any rejection nobody handles be reported.
    await new Promise((r) => setTimeout(r, 50));
    expect(failed).toBeGreaterThan(0);
    expect(outcome).toMatch(/503 Slow Down/);
    expect(unhandled).toEqual([]);
    expect(await t.snapshots.latestId()).toBeNull();
  });
});
