/**
 * Finding the rows a delete or update changes: the rows of a snapshot holding given primary keys,
 * or matching a predicate.
 */
import type * as arrow from 'apache-arrow';
import type { DataField } from '@tidemark/format';
import { and } from '../predicate.js';
import { takeBatch } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import { canonical } from '../read/aggregated-columns.js';
import { ConversionFailure, toInternal } from '../write/value-conversion.js';
import { WriteValidationError } from '../write/write-errors.js';
import type { RowObject } from '../write/table-write.js';
import type { DeleteOptions, RowChangeTable } from './row-change-table.js';

/** Primary-key values to look up, canonically encoded, and the values per key column. */
export interface KeyLookup {
  readonly pkFields: readonly DataField[];
  readonly wanted: ReadonlySet<string>;
  readonly inValues: readonly unknown[][];
}

/** Validates key objects and converts their primary-key values. */
export function keyLookup(table: RowChangeTable, keys: readonly RowObject[]): KeyLookup {
  const schema = table.context.schema;
  const pkFields = schema.primaryKeys.map((n) => schema.fields.find((f) => f.name === n)!);
  const wanted = new Set<string>();
  const inValues = pkFields.map(() => [] as unknown[]);
  keys.forEach((row, r) => {
    if (row === null || typeof row !== 'object') throw new WriteValidationError(undefined, r, 'expected a key object { column: value }');
    const values = pkFields.map((f, i) => {
      let v: unknown;
      try {
        v = toInternal(f.type, row[f.name]);
      } catch (e) {
        if (e instanceof ConversionFailure) throw new WriteValidationError(f.name, r, e.message);
        throw e;
      }
      if (v === null) throw new WriteValidationError(f.name, r, 'missing primary-key column');
      inValues[i]!.push(v);
      return v;
    });
    wanted.add(canonical(values));
  });
  return { pkFields, wanted, inValues };
}

/** The rows of the snapshot whose primary key is one of the looked-up keys, as Arrow batches of all columns. */
export async function findKeys(
  table: RowChangeTable,
  { pkFields, wanted, inValues }: KeyLookup,
  snapshotId: number,
  onProgress?: DeleteOptions['onProgress'],
): Promise<arrow.RecordBatch[]> {
  if (wanted.size === 0) return [];
  let rows = 0;
  onProgress?.({ phase: 'scanning', done: 0, unit: 'rows' });
  const where = and(
    ...pkFields.map((f, i) => ({ kind: 'in', column: f.name, type: f.type, values: inValues[i]!, negated: false }) as const),
  );
  const out: arrow.RecordBatch[] = [];
  for await (const batch of table.newRead({ snapshotId, where }).batches()) {
    const readers = pkFields.map((f) => valueReader(batch.getChild(f.name)!.data[0]!, f.type));
    const keep: number[] = [];
    for (let i = 0; i < batch.numRows; i++) if (wanted.has(canonical(readers.map((read) => read(i))))) keep.push(i);
    if (keep.length > 0) out.push(keep.length === batch.numRows ? batch : takeBatch(batch, keep));
    rows += keep.length;
    onProgress?.({ phase: 'scanning', done: rows, unit: 'rows' });
  }
  return out;
}

/** The rows of the snapshot matching `where`, counted on `onProgress` as they are found. */
export async function findRows(
  table: RowChangeTable,
  snapshotId: number,
  where: string,
  onProgress: DeleteOptions['onProgress'],
): Promise<arrow.RecordBatch[]> {
  const out: arrow.RecordBatch[] = [];
  let rows = 0;
  onProgress?.({ phase: 'scanning', done: 0, unit: 'rows' });
  for await (const batch of table.newRead({ snapshotId, where }).batches()) {
    out.push(batch);
    rows += batch.numRows;
    onProgress?.({ phase: 'scanning', done: rows, unit: 'rows' });
  }
  return out;
}
