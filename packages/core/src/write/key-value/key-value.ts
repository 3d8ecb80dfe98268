/**
 * Materialized primary-key records and their Arrow form. The writers work on Arrow columns (see
 * {@link KeyValueColumns}); {@link KeyValue} objects are the convenient form for small inputs,
 * tests and merge functions.
 */
import type * as arrow from 'apache-arrow';
import { trimmedPrimaryKeys, type DataField, type TableSchema, type Value } from '@tidemark/format';
import { buildColumn } from '../arrow-columns.js';
import type { WriteValue } from '../value-conversion.js';
import type { RowKindValue } from './row-kind.js';

/** One record of a primary-key table. */
export interface KeyValue {
  /** Trimmed primary key values (primary key minus partition keys), in primary-key order. */
  readonly key: readonly Value[];
  /** `_SEQUENCE_NUMBER`. */
  readonly sequence: bigint;
  /** `_VALUE_KIND`: 0 `+I`, 1 `-U`, 2 `+U`, 3 `-D`. */
  readonly rowKind: RowKindValue;
  /** Every table column in schema order (ARRAY/ROW as arrays, MAP/MULTISET as `[key, value]` pairs). */
  readonly value: readonly WriteValue[];
}

/** Records as Arrow columns: the table's columns in schema order plus one sequence number and row kind per row. */
export interface KeyValueColumns {
  readonly columns: readonly arrow.Data[];
  readonly sequence: BigInt64Array;
  readonly kinds: Int8Array;
}

/** The trimmed primary-key fields of a schema (primary key minus partition keys, in key order). */
export function trimmedKeyFields(schema: TableSchema): DataField[] {
  return trimmedPrimaryKeys(schema).map((n) => {
    const f = schema.fields.find((x) => x.name === n);
    if (!f) throw new TypeError(`primary key '${n}' is not a column of schema ${schema.id}`);
    return f;
  });
}

/** Arrow columns of materialized records (values in `fields` order). */
export function keyValueColumns(fields: readonly DataField[], records: readonly KeyValue[]): KeyValueColumns {
  const sequence = new BigInt64Array(records.length);
  const kinds = new Int8Array(records.length);
  records.forEach((kv, i) => {
    sequence[i] = kv.sequence;
    kinds[i] = kv.rowKind;
  });
  const columns = fields.map((f, c) =>
    buildColumn(
      f.type,
      records.map((kv) => kv.value[c] ?? null),
    ),
  );
  return { columns, sequence, kinds };
}
