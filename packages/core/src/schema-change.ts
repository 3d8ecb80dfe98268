/**
 * Schema evolution: a {@link SchemaChange} model and {@link alterTable}, which applies a list of
 * changes to the latest schema and publishes the result as `schema/schema-<latest+1>`, following
 * Java Paimon's `SchemaManager.commitChanges`:
 *
 * - field ids are permanent: a rename keeps the id, a new column takes `highestFieldId + 1` (its
 *   nested ROW fields the ids after it), a dropped column's id is never reused;
 * - old schema files are never modified; the new one is created with create-if-absent, and a writer
 *   that loses the race re-reads the latest schema and re-applies its changes.
 *
 * Only top-level columns can be changed (no nested paths).
 */
import type { FileIO } from '@tidemark/storage';
import {
  CURRENT_SCHEMA_VERSION,
  parseTypeString,
  serializeSchema,
  typeToString,
  type DataField,
  type DataType,
  type TableSchema,
} from '@tidemark/format';
import { typeChangeRefusal } from './cast/cast-rules.js';
import { tableOptions, type CoreOptions } from './core-options.js';
import { TidemarkUserError } from './errors.js';
import { SchemaManager } from './schema-manager.js';
import { reassignNestedIds } from './schema-builder.js';
import { validateTableSchema } from './schema-validation.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { TablePaths } from './table-paths.js';

/** A schema change is invalid for the table (unknown column, refused type change, immutable option …). */
export class SchemaChangeError extends TidemarkUserError {
  constructor(
    message: string,
    /** What the error is about: the column or option it names, when there is one. */
    readonly subject?: { readonly column?: string; readonly option?: string },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where an added or moved column goes; default is after the last column. */
export type ColumnPosition = { readonly kind: 'first' } | { readonly kind: 'after'; readonly column: string };

/** One change of a table's schema (Paimon's `SchemaChange`, top-level columns only). */
export type SchemaChange =
  | { readonly kind: 'set-option'; readonly key: string; readonly value: string }
  | { readonly kind: 'remove-option'; readonly key: string }
  /** Sets (or with null removes) the table comment. */
  | { readonly kind: 'update-comment'; readonly comment: string | null }
  | {
      readonly kind: 'add-column';
      readonly name: string;
      /** Paimon SQL type string (`"BIGINT"`, `"ROW<a INT>"`) or a DataType; must be nullable. */
      readonly type: string | DataType;
      readonly description?: string;
      readonly position?: ColumnPosition;
    }
  | { readonly kind: 'drop-column'; readonly name: string }
  | { readonly kind: 'rename-column'; readonly name: string; readonly newName: string }
  | {
      readonly kind: 'alter-type';
      readonly name: string;
      readonly type: string | DataType;
      /** Keep the column's current nullability instead of the one of `type` (Paimon's `keepNullability`). */
      readonly keepNullability?: boolean;
    }
  /** Sets (or with null removes) a column's description. */
  | { readonly kind: 'update-column-comment'; readonly name: string; readonly description: string | null }
  | { readonly kind: 'move-column'; readonly name: string; readonly position: ColumnPosition };

/** Factory functions for {@link SchemaChange} values. */
export const SchemaChanges = {
  setOption: (key: string, value: string): SchemaChange => ({ kind: 'set-option', key, value }),
  removeOption: (key: string): SchemaChange => ({ kind: 'remove-option', key }),
  updateComment: (comment: string | null): SchemaChange => ({ kind: 'update-comment', comment }),
  addColumn: (name: string, type: string | DataType, options: { description?: string; position?: ColumnPosition } = {}): SchemaChange => ({
    kind: 'add-column',
    name,
    type,
    ...options,
  }),
  dropColumn: (name: string): SchemaChange => ({ kind: 'drop-column', name }),
  renameColumn: (name: string, newName: string): SchemaChange => ({ kind: 'rename-column', name, newName }),
  alterType: (name: string, type: string | DataType, keepNullability = false): SchemaChange => ({
    kind: 'alter-type',
    name,
    type,
    keepNullability,
  }),
  updateColumnComment: (name: string, description: string | null): SchemaChange => ({
    kind: 'update-column-comment',
    name,
    description,
  }),
  moveColumn: (name: string, position: ColumnPosition): SchemaChange => ({ kind: 'move-column', name, position }),
} as const;

/** Options that are never edited through option changes: keys are part of the schema itself. */
const KEY_OPTIONS = new Set(['primary-key', 'partition']);

/**
 * Options that cannot change once the table has snapshots (Paimon's `@Immutable` options plus
 * `bucket`: existing files are laid out for the old bucket count and tidemark does not rescale).
 */
const IMMUTABLE_WHEN_NOT_EMPTY = new Set([
  'bucket',
  'bucket-key',
  'merge-engine',
  'sequence.field',
  'data-evolution.enabled',
  'row-tracking.enabled',
]);

const DELETION_VECTORS_ENABLED = 'deletion-vectors.enabled';
const DELETION_VECTORS_MODIFIABLE = 'deletion-vectors.modifiable';

/** Column names Paimon reserves for its own system columns. */
const RESERVED_NAMES = new Set(['_SEQUENCE_NUMBER', '_VALUE_KIND', '_ROW_ID', '_LEVEL']);
const RESERVED_PREFIX = '_KEY_';

/** Context of {@link applySchemaChanges}. */
export interface ApplyContext {
  /**
   * Whether the table has snapshots; consulted only for option changes (immutable options may
   * change on an empty table). A function so callers can look it up lazily.
   */
  readonly hasSnapshots: boolean | (() => Promise<boolean>);
  /** Creation time of the new schema (default: now). */
  readonly timeMillis?: number;
}

/**
 * Applies `changes`, in order, to `schema` and returns the next schema version (`id + 1`). Pure
 * apart from the optional `hasSnapshots` lookup; nothing is written.
 *
 * @throws SchemaChangeError naming the column or option when a change does not apply.
 */
export async function applySchemaChanges(
  schema: TableSchema,
  changes: readonly SchemaChange[],
  context: ApplyContext,
): Promise<TableSchema> {
  if (changes.length === 0) throw new SchemaChangeError('no schema changes given');
  let snapshotsKnown: boolean | undefined = typeof context.hasSnapshots === 'boolean' ? context.hasSnapshots : undefined;
  const hasSnapshots = async (): Promise<boolean> => {
    if (snapshotsKnown === undefined) snapshotsKnown = await (context.hasSnapshots as () => Promise<boolean>)();
    return snapshotsKnown;
  };
  const draft = new SchemaDraft(schema);
  for (const change of changes) {
    switch (change.kind) {
      case 'set-option':
        await draft.setOption(change.key, change.value, hasSnapshots);
        break;
      case 'remove-option':
        await draft.removeOption(change.key, hasSnapshots);
        break;
      case 'update-comment':
        draft.comment = change.comment ?? undefined;
        break;
      case 'add-column':
        draft.addColumn(change);
        break;
      case 'drop-column':
        draft.dropColumn(change.name);
        break;
      case 'rename-column':
        draft.renameColumn(change.name, change.newName);
        break;
      case 'alter-type':
        draft.alterType(change.name, change.type, change.keepNullability);
        break;
      case 'update-column-comment':
        draft.updateColumnComment(change.name, change.description);
        break;
      case 'move-column':
        draft.moveColumn(change.name, change.position);
        break;
      default: {
        const unknown: never = change;
        throw new SchemaChangeError(`unknown schema change ${JSON.stringify(unknown)}`);
      }
    }
  }
  const next = draft.toSchema(schema.id + 1, context.timeMillis ?? Date.now());
  try {
    validateTableSchema(next);
  } catch (e) {
    throw new SchemaChangeError(`the changed schema is invalid: ${(e as Error).message}`, undefined, { cause: e });
  }
  return next;
}

/** The next schema while changes are applied: each change checks its own preconditions. */
class SchemaDraft {
  readonly fields: DataField[];
  highest: number;
  readonly options: Record<string, string> = {};
  comment: string | undefined;
  readonly partitionKeys: string[];
  readonly primaryKeys: string[];
  /** The options before any change: Paimon checks type changes against them. */
  readonly baseOptions: CoreOptions;

  constructor(schema: TableSchema) {
    this.baseOptions = tableOptions(schema);
    this.fields = [...schema.fields];
    this.highest = schema.highestFieldId;
    for (const [k, v] of Object.entries(schema.options)) setOwn(this.options, k, v);
    this.comment = schema.comment;
    this.partitionKeys = [...schema.partitionKeys];
    this.primaryKeys = [...schema.primaryKeys];
  }

  toSchema(id: number, timeMillis: number): TableSchema {
    return {
      version: CURRENT_SCHEMA_VERSION,
      id,
      fields: this.fields,
      highestFieldId: this.highest,
      partitionKeys: this.partitionKeys,
      primaryKeys: this.primaryKeys,
      options: this.options,
      timeMillis,
      ...(this.comment !== undefined ? { comment: this.comment } : {}),
    };
  }

  async setOption(key: string, value: string, hasSnapshots: () => Promise<boolean>): Promise<void> {
    checkOptionKey(key, 'set');
    if (typeof value !== 'string') {
      throw new SchemaChangeError(`cannot set option '${key}': value must be a string`, { option: key });
    }
    const old = tableOptions({ options: this.options, primaryKeys: this.primaryKeys }).get(key);
    if (old !== value && IMMUTABLE_WHEN_NOT_EMPTY.has(key) && (await hasSnapshots())) {
      throw new SchemaChangeError(
        `cannot change option '${key}' from ${old === undefined ? 'its default' : `'${old}'`} to '${value}': ` +
          `it cannot change once the table has snapshots`,
        { option: key },
      );
    }
    await this.checkDeletionVectorMode(key, old, value, hasSnapshots);
    setOwn(this.options, key, value);
  }

  /**
   * Paimon refuses to switch `deletion-vectors.enabled` unless `deletion-vectors.modifiable` is
   * true: on a primary-key table, records already compacted into levels >= 1 carry no deletion
   * vectors and would read as duplicates; on an append table, turning it off resurrects the rows
   * its deletion vectors delete. Turning it on for an append table or on an empty table is safe,
   * so those stay allowed.
   */
  private async checkDeletionVectorMode(
    key: string,
    old: string | undefined,
    value: string | undefined,
    hasSnapshots: () => Promise<boolean>,
  ): Promise<void> {
    if (key !== DELETION_VECTORS_ENABLED) return;
    const before = (old ?? 'false').toLowerCase() === 'true';
    const after = (value ?? 'false').toLowerCase() === 'true';
    if (before === after) return;
    if ((this.options[DELETION_VECTORS_MODIFIABLE] ?? 'false').toLowerCase() === 'true') return;
    if (after && this.primaryKeys.length === 0) return;
    if (!(await hasSnapshots())) return;
    const risk =
      this.primaryKeys.length > 0
        ? 'records already compacted into levels above 0 would read as duplicates or resurface'
        : 'rows its deletion vectors delete would reappear';
    throw new SchemaChangeError(
      `cannot change option '${DELETION_VECTORS_ENABLED}' from ${before} to ${after} on a table with snapshots: ${risk}. ` +
        `Run 'tidemark compact --full' first, then set '${DELETION_VECTORS_MODIFIABLE}' = 'true' to allow the change (as in Paimon)`,
      { option: DELETION_VECTORS_ENABLED },
    );
  }

  async removeOption(key: string, hasSnapshots: () => Promise<boolean>): Promise<void> {
    checkOptionKey(key, 'remove');
    const present = Object.prototype.hasOwnProperty.call(this.options, key);
    if (present && IMMUTABLE_WHEN_NOT_EMPTY.has(key) && (await hasSnapshots())) {
      throw new SchemaChangeError(`cannot remove option '${key}': it cannot change once the table has snapshots`, { option: key });
    }
    if (present) await this.checkDeletionVectorMode(key, this.options[key], undefined, hasSnapshots);
    delete this.options[key];
  }

  addColumn(change: Extract<SchemaChange, { kind: 'add-column' }>): void {
    const what = `add column '${change.name}'`;
    this.checkNewName(change.name, what);
    const type = resolveType(change.type, change.name, what);
    if (!type.nullable) {
      // Files written before the change have no values for this column; Java refuses too.
      throw new SchemaChangeError(`cannot ${what}: added columns must be nullable, but the type is ${typeToString(type)}`, {
        column: change.name,
      });
    }
    const id = ++this.highest;
    const reassigned = reassignNestedIds(type, () => ++this.highest);
    const field: { -readonly [K in keyof DataField]: DataField[K] } = { id, name: change.name, type: reassigned };
    if (change.description !== undefined) field.description = change.description;
    this.insertAt(field, change.position, what);
  }

  dropColumn(name: string): void {
    const i = this.indexOf(name, 'drop');
    this.refuseKey(name, 'drop', { primary: true, bucket: true });
    if (this.fields.length === 1) {
      throw new SchemaChangeError(`cannot drop column '${name}': a table needs at least one column`, { column: name });
    }
    this.fields.splice(i, 1);
  }

  renameColumn(name: string, newName: string): void {
    const i = this.indexOf(name, 'rename');
    this.refuseKey(name, 'rename', { primary: true, bucket: false });
    if (newName === name) return;
    this.checkNewName(newName, `rename column '${name}' to '${newName}'`);
    this.fields[i] = { ...this.fields[i]!, name: newName };
    renameInOptions(this.options, name, newName);
  }

  alterType(name: string, type: string | DataType, keepNullability: boolean | undefined): void {
    const i = this.indexOf(name, 'change the type of');
    this.refuseKey(name, 'change the type of', { primary: true, bucket: true });
    const field = this.fields[i]!;
    let target = resolveType(type, name, `change the type of column '${name}'`);
    if (keepNullability) target = { ...target, nullable: field.type.nullable } as DataType;
    else if (!field.type.nullable && target.nullable && typeof type === 'string' && !/\bNULL\s*$/i.test(type)) {
      // `BIGINT` for a `BIGINT NOT NULL` column reads as "same type", not "allow NULLs": the
      // constraint is dropped only when asked for in so many words.
      const base = typeToString(target);
      throw new SchemaChangeError(
        `cannot change column '${name}' to ${base}: the column is NOT NULL and ${base} would silently make it nullable; ` +
          `give '${base} NOT NULL' to keep the constraint or '${base} NULL' to allow NULLs`,
        { column: name },
      );
    }
    checkTypeChange(name, field.type, target, this.baseOptions);
    this.fields[i] = { ...field, type: target };
  }

  updateColumnComment(name: string, description: string | null): void {
    const i = this.indexOf(name, 'comment');
    const { description: _old, ...rest } = this.fields[i]!;
    this.fields[i] = description === null ? rest : { ...rest, description };
  }

  moveColumn(name: string, position: ColumnPosition): void {
    const i = this.indexOf(name, 'move');
    const [field] = this.fields.splice(i, 1);
    if (position.kind === 'after' && position.column === name) {
      throw new SchemaChangeError(`cannot move column '${name}' after itself`, { column: name });
    }
    this.insertAt(field!, position, `move column '${name}'`);
  }

  private indexOf(name: string, what: string): number {
    const i = this.fields.findIndex((f) => f.name === name);
    if (i < 0) {
      throw new SchemaChangeError(
        `cannot ${what} column '${name}': no such column (columns: ${this.fields.map((f) => f.name).join(', ')})`,
        {
          column: name,
        },
      );
    }
    return i;
  }

  private refuseKey(name: string, what: string, opts: { primary: boolean; bucket: boolean }): void {
    if (this.partitionKeys.includes(name)) {
      throw new SchemaChangeError(`cannot ${what} column '${name}': it is a partition key`, { column: name });
    }
    if (opts.primary && this.primaryKeys.includes(name)) {
      throw new SchemaChangeError(`cannot ${what} column '${name}': it is part of the primary key`, { column: name });
    }
    if (opts.bucket && tableOptions({ options: this.options, primaryKeys: this.primaryKeys }).bucketKey.includes(name)) {
      throw new SchemaChangeError(`cannot ${what} column '${name}': it is a bucket key (option 'bucket-key')`, { column: name });
    }
  }

  private checkNewName(name: string, what: string): void {
    if (typeof name !== 'string' || name.trim() === '') {
      throw new SchemaChangeError(`cannot ${what}: the column name is empty`);
    }
    if (this.fields.some((f) => f.name === name)) {
      throw new SchemaChangeError(`cannot ${what}: column '${name}' already exists`, { column: name });
    }
    if (RESERVED_NAMES.has(name) || name.startsWith(RESERVED_PREFIX)) {
      throw new SchemaChangeError(
        `cannot ${what}: '${name}' is reserved for Paimon system columns (${[...RESERVED_NAMES].join(', ')}, ${RESERVED_PREFIX}*)`,
        { column: name },
      );
    }
  }

  private insertAt(field: DataField, position: ColumnPosition | undefined, what: string): void {
    if (position === undefined) this.fields.push(field);
    else if (position.kind === 'first') this.fields.unshift(field);
    else {
      const ref = this.fields.findIndex((f) => f.name === position.column);
      if (ref < 0) {
        throw new SchemaChangeError(`cannot ${what}: reference column '${position.column}' of AFTER does not exist`, {
          column: position.column,
        });
      }
      this.fields.splice(ref + 1, 0, field);
    }
  }
}

/** Options for {@link alterTable}. */
export interface AlterTableOptions {
  /** How often to re-apply the changes after another writer created the same schema id (default 50). */
  readonly maxRetries?: number;
}

/**
 * Applies `changes` to the table's latest schema and creates `schema-<latest+1>` with
 * create-if-absent. When another writer created that id first, re-reads the latest schema and
 * re-applies the changes (which fails with {@link SchemaChangeError} if they no longer apply).
 *
 * @returns the schema written.
 * @throws SchemaChangeError when a change does not apply or the retries are exhausted;
 *   TableNotFoundError when there is no table at `paths`.
 */
export async function alterTable(
  fileIO: FileIO,
  paths: TablePaths,
  changes: readonly SchemaChange[],
  options: AlterTableOptions = {},
): Promise<TableSchema> {
  const maxRetries = options.maxRetries ?? 50;
  const snapshots = new SnapshotManager(fileIO, paths);
  let snapshotsSeen = false;
  // Once a snapshot exists it stays "non-empty"; re-check on retries only while none was seen.
  const hasSnapshots = async (): Promise<boolean> => {
    if (!snapshotsSeen) snapshotsSeen = (await snapshots.latestId()) !== null;
    return snapshotsSeen;
  };
  for (let attempt = 0; ; attempt++) {
    // A fresh manager per attempt: its cache must not hide a schema created by another writer.
    const latest = await new SchemaManager(fileIO, paths).latest();
    const next = await applySchemaChanges(latest, changes, { hasSnapshots });
    const path = paths.schemaPath(next.id);
    if ((await fileIO.createIfAbsent(path, serializeSchema(next))) === 'created') return next;
    if (attempt >= maxRetries) {
      throw new SchemaChangeError(
        `could not alter table ${paths.root}: schema ${next.id} was created concurrently ${attempt + 1} times; giving up`,
      );
    }
  }
}

function checkOptionKey(key: string, what: string): void {
  if (typeof key !== 'string' || key.trim() === '') throw new SchemaChangeError(`cannot ${what} an option with an empty key`);
  if (KEY_OPTIONS.has(key)) {
    throw new SchemaChangeError(`cannot ${what} option '${key}': partition and primary keys are part of the schema and cannot be changed`, {
      option: key,
    });
  }
}

function resolveType(type: string | DataType, column: string, what: string): DataType {
  if (typeof type === 'string') {
    try {
      return parseTypeString(type);
    } catch (e) {
      throw new SchemaChangeError(`cannot ${what}: ${(e as Error).message}`, { column }, { cause: e });
    }
  }
  if (type && typeof type === 'object' && typeof (type as DataType).root === 'string') return type;
  throw new SchemaChangeError(`cannot ${what}: type must be a Paimon type string or a DataType`, { column });
}

/**
 * Refuses a column type change Paimon's `SchemaManager` refuses: a nullable column becoming NOT NULL
 * (unless `alter-column-null-to-not-null.disabled` is false), and any change without both cast
 * support (`DataTypeCasts.supportsCast`, explicit casts unless `disable-explicit-type-casting`) and
 * a cast rule to read old values with (`CastExecutors.resolve`). See docs/writing.md, "Schema
 * evolution", for the table of changes.
 */
function checkTypeChange(column: string, from: DataType, to: DataType, options: CoreOptions): void {
  const fromStr = typeToString(from);
  const toStr = typeToString(to);
  if (from.nullable && !to.nullable && options.alterColumnNullToNotNullDisabled) {
    throw new SchemaChangeError(
      `cannot change column '${column}' from ${fromStr} to ${toStr}: a nullable column cannot become NOT NULL ` +
        `(set 'alter-column-null-to-not-null.disabled' = 'false' to allow it, as in Paimon)`,
      { column },
    );
  }
  const refusal = typeChangeRefusal(from, to, { disableExplicitTypeCasting: options.disableExplicitTypeCasting });
  if (refusal !== null) {
    throw new SchemaChangeError(`cannot change column '${column}' from ${fromStr} to ${toStr}: ${refusal}`, { column });
  }
}

/**
 * Follows a rename into options that name columns, as Java's `applyRenameColumnsToOptions` does:
 * `bucket-key`, `sequence.field` and `fields.<name>.*` keys.
 */
function renameInOptions(options: Record<string, string>, from: string, to: string): void {
  for (const key of ['bucket-key', 'sequence.field']) {
    const v = tableOptions({ options, primaryKeys: [] }).get(key);
    if (v === undefined) continue;
    setOwn(
      options,
      key,
      v
        .split(',')
        .map((s) => (s.trim() === from ? to : s.trim()))
        .join(','),
    );
  }
  const prefix = `fields.${from}.`;
  for (const key of Object.keys(options)) {
    if (!key.startsWith(prefix)) continue;
    const value = options[key]!;
    delete options[key];
    setOwn(options, `fields.${to}.${key.slice(prefix.length)}`, value);
  }
}

/** Defines an own enumerable property, so a key named `__proto__` stays an ordinary option. */
function setOwn(target: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
