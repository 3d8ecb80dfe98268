/**
 * Table schema files (`schema/schema-N`): parsing with Java's defaults and byte-identical printing.
 */
import { CorruptFileError, SchemaError } from './errors.js';
import { parseJson, stringifyJackson, type JsonObject, type JsonValue } from './json.js';
import { dataFieldToJson, parseDataFieldJson } from './type-json.js';
import type { DataField, RowType } from './types.js';

/** One version of a table's schema, as stored in `schema/schema-N`. */
export interface TableSchema {
  /** Schema file format version (3 today; missing in very old files means 1). */
  readonly version: number;
  /** Schema id, equal to N in the file name. */
  readonly id: number;
  readonly fields: readonly DataField[];
  /** Max field id ever assigned, including nested and dropped fields. */
  readonly highestFieldId: number;
  readonly partitionKeys: readonly string[];
  readonly primaryKeys: readonly string[];
  /** All table options; values are always strings. */
  readonly options: Readonly<Record<string, string>>;
  readonly comment?: string;
  /** Creation time in epoch millis (0 when missing). */
  readonly timeMillis: number;
}

/** Current schema file version written by Java Paimon. */
export const CURRENT_SCHEMA_VERSION = 3;

/**
 * Parses a schema file. Applies Java's defaults for old versions: missing `version` means 1;
 * version 1 without a `bucket` option means `bucket = 1`; versions 1–2 without `file.format` mean
 * `orc`; missing `timeMillis` means 0.
 *
 * @param path used in error messages only.
 * @throws CorruptFileError when the content is not a valid schema.
 */
export function parseSchema(text: string | Uint8Array, path: string): TableSchema {
  const str = typeof text === 'string' ? text : new TextDecoder('utf-8', { fatal: true }).decode(text);
  let json: JsonValue;
  try {
    json = parseJson(str);
  } catch (e) {
    throw new CorruptFileError(path, `not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  try {
    return schemaFromJson(json);
  } catch (e) {
    throw new CorruptFileError(path, `invalid schema: ${(e as Error).message}`, { cause: e });
  }
}

function schemaFromJson(json: JsonValue): TableSchema {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new SchemaError('expected a JSON object');
  const o = json as JsonObject;
  const version = optInt(o, 'version') ?? 1;
  const id = reqInt(o, 'id');
  const rawFields = o['fields'];
  if (!Array.isArray(rawFields)) throw new SchemaError('"fields" must be an array');
  const fields = rawFields.map(parseDataFieldJson);
  const highestFieldId = reqInt(o, 'highestFieldId');
  const partitionKeys = strArray(o, 'partitionKeys');
  const primaryKeys = strArray(o, 'primaryKeys');
  const rawOptions = o['options'] ?? {};
  if (rawOptions === null || typeof rawOptions !== 'object' || Array.isArray(rawOptions)) {
    throw new SchemaError('"options" must be an object');
  }
  const options: Record<string, string> = {};
  for (const [k, v] of Object.entries(rawOptions as JsonObject)) {
    if (typeof v !== 'string') throw new SchemaError(`option '${k}' must be a string`);
    // defineProperty so a key named "__proto__" stays an ordinary option.
    Object.defineProperty(options, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  if (version <= 1 && options['bucket'] === undefined) options['bucket'] = '1';
  if (version <= 2 && options['file.format'] === undefined) options['file.format'] = 'orc';
  const comment = o['comment'];
  if (comment !== undefined && comment !== null && typeof comment !== 'string') throw new SchemaError('"comment" must be a string');
  const timeMillis = optInt(o, 'timeMillis') ?? 0;
  const schema: TableSchema = { version, id, fields, highestFieldId, partitionKeys, primaryKeys, options, timeMillis };
  return typeof comment === 'string' ? { ...schema, comment } : schema;
}

/** Prints a schema exactly as Java writes it (member order, Jackson pretty printing, no trailing newline). */
export function serializeSchema(schema: TableSchema): string {
  const json: JsonObject = {
    version: schema.version,
    id: schema.id,
    fields: schema.fields.map(dataFieldToJson),
    highestFieldId: schema.highestFieldId,
    partitionKeys: [...schema.partitionKeys],
    primaryKeys: [...schema.primaryKeys],
    options: { ...schema.options },
    comment: schema.comment,
    timeMillis: schema.timeMillis,
  };
  return stringifyJackson(json);
}

/** Primary keys minus partition keys (the key columns stored in PK data files). */
export function trimmedPrimaryKeys(schema: TableSchema): string[] {
  const pks = schema.primaryKeys.filter((k) => !schema.partitionKeys.includes(k));
  if (schema.primaryKeys.length > 0 && pks.length === 0) {
    throw new SchemaError(`primary key (${schema.primaryKeys.join(', ')}) must contain at least one column that is not a partition key`);
  }
  return pks;
}

/** Top-level field with the given id, or undefined. */
export function fieldById(schema: TableSchema, id: number): DataField | undefined {
  return schema.fields.find((f) => f.id === id);
}

/** The table's columns as a (nullable) ROW type. */
export function logicalRowType(schema: TableSchema): RowType {
  return { root: 'ROW', nullable: true, fields: schema.fields };
}

function reqInt(o: JsonObject, key: string): number {
  const v = optInt(o, key);
  if (v === undefined) throw new SchemaError(`missing integer member "${key}"`);
  return v;
}

function optInt(o: JsonObject, key: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new SchemaError(`member "${key}" must be an integer`);
}

function strArray(o: JsonObject, key: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new SchemaError(`"${key}" must be an array of strings`);
  return v as string[];
}
