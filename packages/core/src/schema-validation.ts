/**
 * The checks a schema passes before it is stored (create and alter), after Paimon's
 * `SchemaValidation`: option values parse, keys name columns, option combinations are ones
 * Paimon accepts, and a primary-key table's merge settings are ones tidemark's writer can apply.
 * A table that passes can be written; one that does not is refused before `schema-N` exists, with
 * the option named, instead of every later write failing.
 */
import type { TableSchema } from '@tidemark/format';
import { OPTION, tableOptions, type CoreOptions } from './core-options.js';
import { TidemarkUserError } from './errors.js';
import { PAIMON_AGGREGATE_FUNCTIONS } from './read/aggregate-functions.js';
import { mergeEngineOptions } from './read/merge-engine.js';
import { fileIndexSettings } from './file-index/file-index-options.js';

/** A table definition is invalid (unknown key column, bad type, inconsistent bucket options …). */
export class SchemaValidationError extends TidemarkUserError {}

/**
 * Checks option values, the bucket / bucket-key rules, per-field options, sequence fields,
 * aggregate functions, changelog producer and merge engine combinations of a schema.
 *
 * @throws SchemaValidationError naming the first bad option or key.
 */
export function validateTableSchema(schema: TableSchema): void {
  const opts = tableOptions(schema);
  try {
    opts.validate();
  } catch (e) {
    throw new SchemaValidationError((e as Error).message, { cause: e });
  }
  try {
    fileIndexSettings(schema, opts);
  } catch (e) {
    throw new SchemaValidationError((e as Error).message, { cause: e });
  }
  const names = new Set(schema.fields.map((f) => f.name));
  validateBucketKey(schema, opts, names);
  validateFieldOptions(opts, names);
  const isPk = schema.primaryKeys.length > 0;
  if (!isPk && opts.changelogProducer !== 'none') {
    throw new SchemaValidationError(
      `table option '${OPTION.CHANGELOG_PRODUCER}' = '${opts.changelogProducer}' needs a primary key (as in Paimon); define one or remove the option`,
    );
  }
  if (!isPk) return;
  const missing = schema.partitionKeys.filter((k) => !schema.primaryKeys.includes(k));
  if (missing.length > 0) {
    // Paimon writes such a table with a cross-partition index (bucket -1); tidemark does not.
    throw new SchemaValidationError(
      `primary key (${schema.primaryKeys.join(', ')}) must include the partition key(s) ${missing.join(', ')}: ` +
        `cross-partition updates are not supported; use primary key (${[...schema.primaryKeys, ...missing].join(', ')})`,
    );
  }
  validateSequenceField(opts, names);
  if (opts.mergeEngine === 'first-row' && opts.changelogProducer !== 'none' && opts.changelogProducer !== 'lookup') {
    throw new SchemaValidationError(
      `table option '${OPTION.CHANGELOG_PRODUCER}' = '${opts.changelogProducer}' cannot be used with merge engine first-row ` +
        "(as in Paimon): use 'none' or 'lookup'",
    );
  }
  try {
    mergeEngineOptions(schema);
  } catch (e) {
    throw new SchemaValidationError((e as Error).message, { cause: e });
  }
}

function validateBucketKey(schema: TableSchema, opts: CoreOptions, names: ReadonlySet<string>): void {
  for (const k of opts.bucketKey) {
    if (!names.has(k)) throw new SchemaValidationError(`option 'bucket-key' names unknown column '${k}'`);
    if (schema.partitionKeys.includes(k)) {
      throw new SchemaValidationError(`bucket key '${k}' must not be a partition key`);
    }
    if (schema.primaryKeys.length > 0 && !schema.primaryKeys.includes(k)) {
      throw new SchemaValidationError(`bucket key '${k}' must be part of the primary key (${schema.primaryKeys.join(', ')})`);
    }
  }
  if (schema.primaryKeys.length === 0 && opts.bucket > 0 && opts.bucketKey.length === 0) {
    throw new SchemaValidationError(
      `append table with 'bucket' = ${opts.bucket} needs option 'bucket-key' (the columns that choose a row's bucket)`,
    );
  }
  if (schema.primaryKeys.length === 0 && opts.bucket === -1 && opts.bucketKey.length > 0) {
    throw new SchemaValidationError(`option 'bucket-key' needs a fixed 'bucket' count (bucket is -1)`);
  }
}

/**
 * Paimon's `validateFieldsPrefix`: `fields.<col>[,<col>...].<setting>` names columns of the table;
 * and every aggregate function named is one Paimon has (whatever the merge engine: a name no
 * engine knows is a typo).
 */
function validateFieldOptions(opts: CoreOptions, names: ReadonlySet<string>): void {
  for (const key of Object.keys(opts.raw)) {
    if (!key.startsWith('fields.') || key === OPTION.FIELDS_DEFAULT_AGGREGATE_FUNCTION) continue;
    const rest = key.slice('fields.'.length);
    const dot = rest.indexOf('.');
    for (const column of (dot < 0 ? rest : rest.slice(0, dot)).split(',').map((c) => c.trim())) {
      if (!names.has(column)) {
        throw new SchemaValidationError(
          `table option '${key}' names '${column}', which is not a column of the table (columns: ${[...names].join(', ')})`,
        );
      }
    }
  }
  const functions: Array<[string, string]> = opts.aggregateFunctionKeys.map((k) => [k, opts.get(k)!.trim().toLowerCase()]);
  const fallback = opts.fieldsDefaultAggregateFunction;
  if (fallback !== null) functions.push([OPTION.FIELDS_DEFAULT_AGGREGATE_FUNCTION, fallback]);
  for (const [key, fn] of functions) {
    if (!PAIMON_AGGREGATE_FUNCTIONS.has(fn)) {
      throw new SchemaValidationError(
        `table option '${key}' = '${fn}' is not an aggregate function (Paimon's: ${[...PAIMON_AGGREGATE_FUNCTIONS].join(', ')})`,
      );
    }
  }
}

/** Paimon's `validateSequenceField`: columns that exist, each once, not aggregated, not on first-row. */
function validateSequenceField(opts: CoreOptions, names: ReadonlySet<string>): void {
  const seen = new Set<string>();
  for (const f of opts.sequenceField) {
    if (!names.has(f)) {
      throw new SchemaValidationError(
        `table option '${OPTION.SEQUENCE_FIELD}' names '${f}', which is not a column of the table (columns: ${[...names].join(', ')})`,
      );
    }
    if (seen.has(f)) throw new SchemaValidationError(`table option '${OPTION.SEQUENCE_FIELD}' names '${f}' twice`);
    seen.add(f);
    if (opts.fieldAggregateFunction(f) !== null) {
      throw new SchemaValidationError(
        `sequence field '${f}' cannot have an aggregate function ('fields.${f}.aggregate-function'): it orders the records, as in Paimon`,
      );
    }
  }
  if (seen.size > 0 && opts.mergeEngine === 'first-row') {
    throw new SchemaValidationError(`table option '${OPTION.SEQUENCE_FIELD}' cannot be used with merge engine first-row (as in Paimon)`);
  }
}
