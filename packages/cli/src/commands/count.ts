import type { ScanPlan, Table } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { writeJsonSummary } from '../output/progress.js';
import { jsonOption, printLine, rowProgress, snapshotOption, tableArgument, withTable, quietOption, branchOption } from './shared.js';

/** `tidemark count`: the number of rows, from manifest row counts when no row has to be read. */
export const countCommand = defineCommand({
  name: 'count',
  summary: 'count the rows of a table (or of a snapshot, timestamp or tag), optionally with a filter',
  usage: {
    synopsis: ['count <table> [--where "<predicate>"] [--snapshot N | --timestamp T | --tag NAME] [--json]'],
    description:
      'Append tables without a filter are counted from the row counts in the manifests (minus rows removed by deletion ' +
      'vectors), without reading a data file. With --where, and for primary-key tables (whose rows are merged by key), ' +
      'the rows are read and counted. With --json prints {"rows", "snapshotId", "method"} where method is "manifests" or "scan".',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      where: { type: 'string', valueName: 'predicate', description: 'count only rows matching this filter' },
      snapshot: { ...snapshotOption, description: 'count this snapshot' },
      timestamp: { type: 'string', valueName: 'T', description: 'count the latest snapshot at or before T (ISO-8601 or epoch ms)' },
      tag: { type: 'string', valueName: 'NAME', description: 'count the snapshot of this tag' },
      json: jsonOption,
      quiet: quietOption,
    },
    conflicts: [['snapshot', 'timestamp', 'tag']],
  },
  async run(args, ctx) {
    const o = args.options;
    if (o.where !== undefined && o.where.trim() === '') throw new UsageError("option '--where' is empty", 'count');
    const timestamp = o.timestamp !== undefined ? parseInstant(o.timestamp, '--timestamp') : undefined;
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const at = {
        ...(o.snapshot !== undefined ? { snapshotId: o.snapshot } : {}),
        ...(timestamp !== undefined ? { timestamp } : {}),
        ...(o.tag !== undefined ? { tag: o.tag } : {}),
      };
      const result = await countRows(table, at, o.where, rowProgress(ctx, 'counting', o.quiet));
      if (o.json)
        await writeJsonSummary(ctx.stdout, { rows: result.rows, snapshotId: result.snapshotId, method: result.method }, ctx.signal);
      else await printLine(ctx, String(result.rows));
    });
  },
});

/** What {@link countRows} found. */
export interface RowCount {
  readonly rows: number;
  /** The snapshot counted; null for a table without snapshots. */
  readonly snapshotId: number | null;
  /** `manifests`: summed from file metadata; `scan`: rows read and counted. */
  readonly method: 'manifests' | 'scan';
}

/**
 * Counts the rows of `table` at `at`. Without a filter on an append table, the manifests' row
 * counts are exact (deletion vectors subtracted by their cardinality); anything else is read.
 */
export async function countRows(
  table: Table,
  at: { snapshotId?: number; timestamp?: number; tag?: string },
  where: string | undefined,
  progress: { add(rows: number, bytes: number): void; finish(): void },
): Promise<RowCount> {
  const fields = table.schema().fields;
  if (where === undefined && !table.isPrimaryKeyTable) {
    const plan = await table.newRead(at).plan();
    const rows = metadataCount(plan);
    if (rows !== undefined) return { rows, snapshotId: plan.snapshotId, method: 'manifests' };
  }
  // One narrow column is enough to count; the filter's own columns are read by the reader as needed.
  const read = table.newRead({ ...at, columns: [fields[0]!.name], ...(where !== undefined ? { where } : {}) });
  let rows = 0;
  try {
    for await (const batch of read.batches()) {
      rows += batch.numRows;
      progress.add(batch.numRows, 0);
    }
  } finally {
    progress.finish();
  }
  return { rows, snapshotId: (await read.plan()).snapshotId, method: 'scan' };
}

/** Σ file row counts − Σ deletion-vector cardinalities, or undefined when a cardinality is unknown. */
function metadataCount(plan: ScanPlan): number | undefined {
  let rows = 0;
  for (const split of plan.splits) {
    for (const f of split.files) {
      rows += f.meta.rowCount;
      const dv = split.deletionFiles.get(f.meta.fileName);
      if (dv !== undefined) {
        const cardinality = dv.range.cardinality;
        if (cardinality === null || cardinality === undefined) return undefined;
        rows -= cardinality;
      }
    }
  }
  return rows;
}
