/**
 * Where the sequence numbers of a pipeline's writers start: after the highest sequence number of
 * each (partition, bucket) live when the first file is written, as `Table.newBatchWrite` does.
 * Primary-key tables need this: a writer that restarted at 0 would write records that older ones
 * outrank (the commit would then have to re-sequence every checkpoint's files).
 */
import type { Table, TableWriteOptions } from '@tidemark/core';

/** The `startSequence` option for the writers of `table` (undefined where numbering may start at 0). */
export function pipelineStartSequence(table: Table): TableWriteOptions['startSequence'] {
  const schema = table.schema();
  // Bucket-unaware append tables number each writer from 0, as Java's append writer does.
  if (schema.primaryKeys.length === 0 && table.context.options.bucket === -1) return undefined;
  let maxima: Promise<Map<string, bigint>> | undefined;
  return async (partition, bucket) => {
    maxima ??= (async () => {
      const out = new Map<string, bigint>();
      for (const split of (await table.newRead().plan()).splits) {
        const key = slot(split.partition, split.bucket);
        let max = out.get(key);
        for (const f of split.files) if (max === undefined || f.meta.maxSequenceNumber > max) max = f.meta.maxSequenceNumber;
        if (max !== undefined) out.set(key, max);
      }
      return out;
    })();
    const max = (await maxima).get(slot(partition, bucket));
    return max === undefined ? 0n : max + 1n;
  };
}

function slot(partition: Uint8Array, bucket: number): string {
  return `${bucket}|${Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex')}`;
}
