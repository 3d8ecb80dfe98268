/**
 * Row-group pruning: the column-chunk statistics of a Parquet row group, turned into the values
 * predicates compare (`compareValues` in predicate.ts), so that a read skips the row groups in
 * which no row can match its filter. Only types whose statistics mean the same ordering as the
 * predicate's are used; any other column is "unknown" and never prunes.
 */
import type {
  DataField,
  DataType,
  ParquetColumnChunkStats,
  ParquetLeafColumn,
  ParquetRowGroupInfo,
  ParquetStatValue,
} from '@tidemark/format';
import { formatStatsSurviveCast } from '../cast/cast-rules.js';
import { mightMatch, predicateColumns, type ColumnStats, type Predicate } from '../predicate.js';

/**
 * The row-group test of a read: `predicate` names read fields; `fileFields[i]` is the file's field
 * of `readFields[i]` (matched by id, absent when the file lacks it). Returns null when no column
 * of the predicate can prune (then every group is read).
 */
export function rowGroupFilter(
  predicate: Predicate,
  readFields: readonly DataField[],
  fileFields: readonly (DataField | undefined)[],
): ((group: ParquetRowGroupInfo) => boolean) | null {
  const usable = prunableColumns(predicate, readFields, fileFields);
  if (usable.size === 0) return null;
  return (group) => {
    const chunks = new Map<string, ParquetColumnChunkStats>();
    for (const c of group.columns) if (c.column.path.length === 1) chunks.set(c.column.path[0]!, c);
    return mightMatch(predicate, {
      rowCount: group.numRows,
      columns: (column) => {
        const u = usable.get(column);
        const chunk = u && chunks.get(u.physical);
        return chunk ? columnStats(chunk, u.type) : undefined;
      },
    });
  };
}

/**
 * The predicate's columns whose file statistics can prune: read column name → the file's physical
 * column and the read type. A type changed by schema evolution may order differently (or be
 * cast): such a column is left out.
 */
export function prunableColumns(
  predicate: Predicate,
  readFields: readonly DataField[],
  fileFields: readonly (DataField | undefined)[],
): Map<string, { physical: string; type: DataType }> {
  const usable = new Map<string, { physical: string; type: DataType }>();
  for (const column of predicateColumns(predicate)) {
    const i = readFields.findIndex((f) => f.name === column);
    const fileField = i < 0 ? undefined : fileFields[i];
    const readType = i < 0 ? undefined : readFields[i]!.type;
    // A type changed by schema evolution may order differently or change values: leave it unknown.
    if (!fileField || !readType || !formatStatsSurviveCast(fileField.type, readType) || !PRUNABLE.has(readType.root)) continue;
    usable.set(column, { physical: fileField.name, type: readType });
  }
  return usable;
}

const PRUNABLE = new Set([
  'BOOLEAN',
  'TINYINT',
  'SMALLINT',
  'INT',
  'BIGINT',
  'FLOAT',
  'DOUBLE',
  'CHAR',
  'VARCHAR',
  'DATE',
  'TIMESTAMP',
  'TIMESTAMP_LTZ',
]);

function columnStats(chunk: ParquetColumnChunkStats, type: DataType): ColumnStats {
  const nullCount = chunk.nullCount;
  // A truncated bound is not a bound of the values for a string compare; only its null count helps.
  const exact = chunk.minExact !== false && chunk.maxExact !== false;
  const min = exact ? statValue(chunk.min, chunk.column.element, type) : undefined;
  const max = exact ? statValue(chunk.max, chunk.column.element, type) : undefined;
  return {
    ...(min !== undefined && max !== undefined ? { min, max } : {}),
    ...(nullCount !== undefined ? { nullCount } : {}),
  };
}

/**
 * A statistics bound of a column (`element`: its Parquet schema element) as the predicate value of
 * `type`, or undefined when it cannot be mapped.
 */
export function statValue(v: ParquetStatValue | undefined, element: ParquetLeafColumn['element'], type: DataType): unknown {
  if (v === undefined) return undefined;
  switch (type.root) {
    case 'BOOLEAN':
      return typeof v === 'boolean' ? v : undefined;
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
      return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
    case 'BIGINT':
      return typeof v === 'bigint' ? v : undefined;
    case 'FLOAT':
    case 'DOUBLE':
      // NaN bounds say nothing about the order of the other values.
      return typeof v === 'number' && !Number.isNaN(v) ? v : undefined;
    case 'CHAR':
    case 'VARCHAR': // STRING is VARCHAR(2147483647)
      return typeof v === 'string' ? v : undefined;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      if (typeof v !== 'bigint') return undefined;
      const perMilli = unitsPerMilli(element);
      if (perMilli === undefined) return undefined;
      // Floor division, so pre-1970 values keep a non-negative nano-of-milli.
      let millis = v / perMilli;
      if (millis * perMilli > v) millis -= 1n;
      const rest = v - millis * perMilli;
      return { millis: Number(millis), nanoOfMillis: Number((rest * 1_000_000n) / perMilli) };
    }
    default:
      return undefined;
  }
}

/** Units of a timestamp column chunk per millisecond (INT96 statistics are decoded as nanoseconds). */
function unitsPerMilli(e: ParquetLeafColumn['element']): bigint | undefined {
  if (e.type === 'INT96') return 1_000_000n;
  const lt = e.logical_type;
  const unit = lt?.type === 'TIMESTAMP' ? lt.unit : undefined;
  if (unit === 'MILLIS' || e.converted_type === 'TIMESTAMP_MILLIS') return 1n;
  if (unit === 'MICROS' || e.converted_type === 'TIMESTAMP_MICROS') return 1_000n;
  if (unit === 'NANOS') return 1_000_000n;
  return undefined;
}
