/**
 * Sink runs over records held in memory, for suites that check the table at each checkpoint of the
 * exactly-once sink against a model of its source.
 */
import {
  FileIOCheckpointStore,
  runIngest,
  type CheckpointInfo,
  type IngestOptions,
  type IngestSummary,
  type ReplayableSource,
  type SourceOffset,
  type SourceRecord,
} from '@tidemark/sink';
import type { FileIO } from '@tidemark/storage';

/**
 * A bounded, replayable source of `records` in order (offset = index of the next record);
 * `before(i)` runs ahead of record `i` (to act on the table mid-run).
 */
export function arraySource(
  records: readonly Record<string, unknown>[],
  id = 'array:test',
  before?: (i: number) => Promise<void>,
): ReplayableSource<Record<string, unknown>> {
  return {
    bounded: true,
    id,
    async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
      for (let i = from === null ? 0 : (from as number); i < records.length; i++) {
        await before?.(i);
        yield { value: records[i]!, offset: i + 1 };
      }
    },
  };
}

/**
 * {@link runIngest} with the info of every checkpoint collected; the checkpoint state lives at
 * `<table>-state` on `fileIO` unless `stateStore` names another store.
 */
export async function ingestCollectingCheckpoints(
  options: Omit<IngestOptions, 'fileIO' | 'onCheckpoint'> & { readonly fileIO: FileIO },
): Promise<{ summary: IngestSummary; infos: CheckpointInfo[] }> {
  const infos: CheckpointInfo[] = [];
  const summary = await runIngest({
    ...options,
    stateStore: options.stateStore ?? new FileIOCheckpointStore(options.fileIO, `${options.table}-state`),
    onCheckpoint: (i) => infos.push(i),
  });
  return { summary, infos };
}
