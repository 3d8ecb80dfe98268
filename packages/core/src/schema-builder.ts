/**
 * Building and validating the first schema of a new table (`schema/schema-0`), the way Java
 * Paimon's `Schema.Builder` + `SchemaManager.createTable` do it.
 */
import { CURRENT_SCHEMA_VERSION, parseTypeString, typeToString, type DataField, type DataType, type TableSchema } from '@tidemark/format';
import { SchemaValidationError, validateTableSchema } from './schema-validation.js';

/** One column of a table definition. */
export interface ColumnSpec {
  readonly name: string;
  /** Paimon SQL type string (`"BIGINT NOT NULL"`, `"DECIMAL(10, 2)"`, `"ROW<a INT>"`) or a DataType. */
  readonly type: string | DataType;
  readonly description?: string;
}

/** What a caller gives to create a table. */
export interface TableSpec {
  readonly fields: readonly ColumnSpec[];
  readonly partitionKeys?: readonly string[];
  readonly primaryKeys?: readonly string[];
  /** Options exactly as they should be stored (values are strings); defaults are not written. */
  readonly options?: Readonly<Record<string, string>>;
  readonly comment?: string;
}

/**
 * Builds schema 0 of a table: field ids are assigned as Java does (each column takes the next id,
 * then its nested ROW fields take the following ids in pre-order), `highestFieldId` is the last id
 * assigned, primary-key columns are made NOT NULL, `version` 3, `timeMillis` = now.
 *
 * @throws SchemaValidationError naming the offending column, key or option.
 */
export function buildInitialSchema(spec: TableSpec, timeMillis: number = Date.now()): TableSchema {
  if (!Array.isArray(spec.fields) || spec.fields.length === 0) {
    throw new SchemaValidationError('a table needs at least one column');
  }
  const partitionKeys = [...(spec.partitionKeys ?? [])];
  const primaryKeys = [...(spec.primaryKeys ?? [])];
  const pkSet = new Set(primaryKeys);
  const names = new Set<string>();
  let highest = -1;
  const fields: DataField[] = spec.fields.map((col, index) => {
    if (typeof col?.name !== 'string' || col.name.trim() === '') {
      throw new SchemaValidationError(`column ${index} has no name`);
    }
    if (names.has(col.name)) throw new SchemaValidationError(`column '${col.name}' is defined twice`);
    names.add(col.name);
    let type: DataType;
    if (typeof col.type === 'string') {
      try {
        type = parseTypeString(col.type);
      } catch (e) {
        throw new SchemaValidationError(`column '${col.name}': ${(e as Error).message}`, { cause: e });
      }
    } else if (col.type && typeof col.type === 'object' && typeof (col.type as DataType).root === 'string') {
      type = col.type;
    } else {
      throw new SchemaValidationError(`column '${col.name}': type must be a Paimon type string or a DataType`);
    }
    const id = ++highest;
    const reassigned = reassignNestedIds(type, () => ++highest);
    const finalType = pkSet.has(col.name) ? ({ ...reassigned, nullable: false } as DataType) : reassigned;
    const field: { -readonly [K in keyof DataField]: DataField[K] } = { id, name: col.name, type: finalType };
    if (col.description !== undefined) field.description = col.description;
    return field;
  });

  checkKeys('partition key', partitionKeys, names);
  checkKeys('primary key', primaryKeys, names);
  for (const key of partitionKeys) {
    const f = fields.find((x) => x.name === key)!;
    if (!PARTITION_TYPES.has(f.type.root)) {
      throw new SchemaValidationError(`partition key '${key}' has type ${typeToString(f.type)}, which cannot be a partition key`);
    }
  }
  if (primaryKeys.length > 0) {
    if (primaryKeys.every((k) => partitionKeys.includes(k))) {
      throw new SchemaValidationError(
        `primary key (${primaryKeys.join(', ')}) must contain a column that is not a partition key (partition keys: ${partitionKeys.join(', ')})`,
      );
    }
    for (const k of primaryKeys) {
      const f = fields.find((x) => x.name === k)!;
      if (!PARTITION_TYPES.has(f.type.root) && f.type.root !== 'BINARY' && f.type.root !== 'VARBINARY') {
        throw new SchemaValidationError(`primary key '${k}' has type ${typeToString(f.type)}, which cannot be a key`);
      }
    }
  }

  const options: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.options ?? {})) {
    if (typeof v !== 'string') throw new SchemaValidationError(`option '${k}' must be a string, got ${typeof v}`);
    Object.defineProperty(options, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  const schema: TableSchema = {
    version: CURRENT_SCHEMA_VERSION,
    id: 0,
    fields,
    highestFieldId: highest,
    partitionKeys,
    primaryKeys,
    options,
    timeMillis,
    ...(spec.comment !== undefined ? { comment: spec.comment } : {}),
  };
  validateTableSchema(schema);
  return schema;
}

const PARTITION_TYPES = new Set<string>([
  'BOOLEAN',
  'TINYINT',
  'SMALLINT',
  'INT',
  'BIGINT',
  'FLOAT',
  'DOUBLE',
  'DECIMAL',
  'CHAR',
  'VARCHAR',
  'DATE',
  'TIME',
  'TIMESTAMP',
  'TIMESTAMP_LTZ',
]);

function checkKeys(what: string, keys: readonly string[], names: ReadonlySet<string>): void {
  const seen = new Set<string>();
  for (const k of keys) {
    if (!names.has(k)) throw new SchemaValidationError(`${what} '${k}' is not a column (columns: ${[...names].join(', ')})`);
    if (seen.has(k)) throw new SchemaValidationError(`${what} '${k}' is listed twice`);
    seen.add(k);
  }
}

/**
 * Java `ReassignFieldId`: gives the nested ROW fields of `type` fresh ids from `next` (the table's
 * field-id counter), in pre-order. Used for new tables and for columns added by schema evolution.
 */
export function reassignNestedIds(type: DataType, next: () => number): DataType {
  switch (type.root) {
    case 'ARRAY':
    case 'MULTISET':
      return { ...type, element: reassignNestedIds(type.element, next) };
    case 'MAP':
      return { ...type, key: reassignNestedIds(type.key, next), value: reassignNestedIds(type.value, next) };
    case 'ROW':
      return {
        ...type,
        fields: type.fields.map((f) => {
          const id = next();
          return { ...f, id, type: reassignNestedIds(f.type, next) };
        }),
      };
    default:
      return type;
  }
}
