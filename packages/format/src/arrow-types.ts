/**
 * The shared mapping of Paimon logical types to Apache Arrow types (see notes/common.md).
 *
 * Every package converts through these functions so that an Arrow batch produced by the reader,
 * the writer and the merge code always has the same physical types.
 */
import * as arrow from 'apache-arrow';

import { SchemaError } from './errors.js';
import type { DataField, DataType } from './types.js';

/** Arrow field metadata key that parquet-rs / parquet-java map to the Parquet `field_id`. */
export const PARQUET_FIELD_ID_KEY = 'PARQUET:field_id';

/** Parquet field id offset of the `_KEY_<name>` columns of primary-key data files (Integer.MAX / 2). */
export const KEY_FIELD_ID_START = 1073741823;
/** Prefix of the key columns of primary-key data files. */
export const KEY_FIELD_PREFIX = '_KEY_';
/** System column of primary-key data files holding the sequence number. */
export const SEQUENCE_NUMBER_FIELD_NAME = '_SEQUENCE_NUMBER';
/** Field id of `_SEQUENCE_NUMBER` (Integer.MAX_VALUE - 1, as Java assigns it). */
export const SEQUENCE_NUMBER_FIELD_ID = 2147483646;
/** System column of primary-key data files holding the row kind (+I, -U, +U, -D). */
export const VALUE_KIND_FIELD_NAME = '_VALUE_KIND';
/** Field id of `_VALUE_KIND` (Integer.MAX_VALUE - 2, as Java assigns it). */
export const VALUE_KIND_FIELD_ID = 2147483645;

/** Converts a Paimon type to its Arrow type (nullability lives on the enclosing field). */
export function toArrowType(type: DataType): arrow.DataType {
  switch (type.root) {
    case 'BOOLEAN':
      return new arrow.Bool();
    case 'TINYINT':
      return new arrow.Int8();
    case 'SMALLINT':
      return new arrow.Int16();
    case 'INT':
      return new arrow.Int32();
    case 'BIGINT':
      return new arrow.Int64();
    case 'FLOAT':
      return new arrow.Float32();
    case 'DOUBLE':
      return new arrow.Float64();
    case 'DECIMAL':
      return new arrow.Decimal(type.scale, type.precision, 128);
    case 'CHAR':
    case 'VARCHAR':
      return new arrow.Utf8();
    case 'BINARY':
    case 'VARBINARY':
      return new arrow.Binary();
    case 'DATE':
      return new arrow.DateDay();
    case 'TIME':
      return new arrow.TimeMillisecond();
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return new arrow.Timestamp(timestampUnit(type.precision), type.root === 'TIMESTAMP_LTZ' ? 'UTC' : null);
    case 'ARRAY':
      return new arrow.List(elementField('element', type.element));
    case 'MAP':
      return mapType(type.key, type.value);
    case 'MULTISET':
      return mapType(type.element, { root: 'INT', nullable: false });
    case 'ROW':
      return new arrow.Struct(type.fields.map((f) => toArrowField(f)));
    default: {
      const never: never = type;
      throw new SchemaError(`unsupported Paimon type ${JSON.stringify(never)}`);
    }
  }
}

/** Arrow time unit used for a TIMESTAMP / TIMESTAMP_LTZ of the given precision. */
export function timestampUnit(precision: number): arrow.TimeUnit {
  if (precision <= 3) return arrow.TimeUnit.MILLISECOND;
  if (precision <= 6) return arrow.TimeUnit.MICROSECOND;
  return arrow.TimeUnit.NANOSECOND;
}

/** Converts a Paimon field to an Arrow field carrying `PARQUET:field_id`. */
export function toArrowField(field: DataField): arrow.Field {
  return new arrow.Field(field.name, toArrowType(field.type), field.type.nullable, new Map([[PARQUET_FIELD_ID_KEY, String(field.id)]]));
}

/** Converts a list of Paimon fields (a row type) to an Arrow schema. */
export function toArrowSchema(fields: readonly DataField[]): arrow.Schema {
  return new arrow.Schema(fields.map((f) => toArrowField(f)));
}

/**
 * Physical columns of a primary-key data file: `_KEY_<name>` per trimmed primary key field
 * (field id 1073741823 + id), `_SEQUENCE_NUMBER`, `_VALUE_KIND`, then every value column.
 */
export function keyValueFileFields(trimmedPrimaryKeyFields: readonly DataField[], valueFields: readonly DataField[]): DataField[] {
  return [
    ...trimmedPrimaryKeyFields.map((f) => ({
      id: KEY_FIELD_ID_START + f.id,
      name: KEY_FIELD_PREFIX + f.name,
      type: f.type,
    })),
    { id: SEQUENCE_NUMBER_FIELD_ID, name: SEQUENCE_NUMBER_FIELD_NAME, type: { root: 'BIGINT', nullable: false } },
    { id: VALUE_KIND_FIELD_ID, name: VALUE_KIND_FIELD_NAME, type: { root: 'TINYINT', nullable: false } },
    ...valueFields,
  ];
}

/**
 * Columns of a primary-key data file whose values are (nearly) unique in the file, written
 * without a Parquet dictionary (`ParquetWriteOptions.plainColumns`): `_SEQUENCE_NUMBER`, and a
 * single-column trimmed primary key with its value column (a file holds each key once). A
 * composite key's columns may repeat (a tenant id, say) and keep their dictionary.
 */
export function keyValuePlainColumns(trimmedPrimaryKeyFields: readonly DataField[]): string[] {
  const out = [SEQUENCE_NUMBER_FIELD_NAME];
  if (trimmedPrimaryKeyFields.length === 1) out.push(KEY_FIELD_PREFIX + trimmedPrimaryKeyFields[0]!.name, trimmedPrimaryKeyFields[0]!.name);
  return out;
}

/** Reads the `PARQUET:field_id` metadata of an Arrow field, or undefined when absent. */
export function arrowFieldId(field: arrow.Field): number | undefined {
  const raw = field.metadata.get(PARQUET_FIELD_ID_KEY);
  if (raw === undefined) return undefined;
  const id = Number(raw);
  return Number.isInteger(id) ? id : undefined;
}

// Nested element / key / value fields have no Paimon field id of their own; the writer leaves
// them without one (Java writes synthetic ids that no reader relies on).
function elementField(name: string, type: DataType): arrow.Field {
  return new arrow.Field(name, toArrowType(type), type.nullable);
}

function mapType(key: DataType, value: DataType): arrow.Map_ {
  const entries = new arrow.Struct([new arrow.Field('key', toArrowType(key), false), elementField('value', value)]);
  return new arrow.Map_(new arrow.Field('entries', entries, false), false);
}
