/**
 * `TableContext`: what every operation on a table needs, built once per schema and passed to
 * scan, read, write, commit, expiration, orphan cleanup, compaction and the sink instead of
 * (fileIO, location, schema) triples. Holding the options and the path factory here is what keeps
 * one option value read one way, and every location built by one factory.
 */
import type { FileIO } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import { coreOptions, warnUnknownOptions, type CoreOptions, type OptionsLogger } from './core-options.js';
import { FileStorePathFactory } from './path-factory.js';

/** A table's storage, schema, typed options and path factory. */
export interface TableContext {
  readonly fileIO: FileIO;
  /** Table root (no trailing slash). */
  readonly location: string;
  /** The schema the options and partition layout come from. */
  readonly schema: TableSchema;
  /** Typed options of {@link schema}. */
  readonly options: CoreOptions;
  /** Locations of this table's files (metadata of the context's branch). */
  readonly paths: FileStorePathFactory;
  /** Where best-effort notices go (unknown options, failed hint writes, failed auto-expiry). */
  readonly logger: OptionsLogger;
}

/** Settings of {@link tableContext}. */
export interface TableContextOptions {
  /** Branch whose metadata to address (default `main`). */
  readonly branch?: string;
  /** Default: `console.warn` with a `[tidemark]` prefix. */
  readonly logger?: OptionsLogger;
}

const DEFAULT_LOGGER: OptionsLogger = { warn: (m) => console.warn(`[tidemark] ${m}`) };

/**
 * The context of the table at `location` with `schema`. Options are parsed lazily and cached per
 * schema object, so building contexts is cheap. Unknown option keys are reported through the
 * logger once per table location, schema id and key.
 */
export function tableContext(fileIO: FileIO, location: string, schema: TableSchema, options: TableContextOptions = {}): TableContext {
  const root = location.replace(/\/+$/, '') || location;
  const logger = options.logger ?? DEFAULT_LOGGER;
  const o = coreOptions(schema);
  warnUnknownOptions(o, `${root} (schema ${schema.id})`, logger);
  const paths = new FileStorePathFactory(root, schema, { options: o, ...(options.branch !== undefined ? { branch: options.branch } : {}) });
  return { fileIO, location: root, schema, options: o, paths, logger };
}

/** The same table with another schema version (time travel, or a schema read after ALTER). */
export function withSchema(ctx: TableContext, schema: TableSchema): TableContext {
  if (schema === ctx.schema) return ctx;
  return tableContext(ctx.fileIO, ctx.location, schema, { branch: ctx.paths.branch, logger: ctx.logger });
}

/** Whether `x` is a {@link TableContext} (for constructors that also take the older positional form). */
export function isTableContext(x: unknown): x is TableContext {
  return typeof x === 'object' && x !== null && 'paths' in x && (x as TableContext).paths instanceof FileStorePathFactory && 'options' in x;
}
