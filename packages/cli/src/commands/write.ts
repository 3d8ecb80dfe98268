import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { Readable } from 'node:stream';
import { LocalFileIO } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER, CorruptFileError, readParquetFile, type DataField, type DataType } from '@tidemark/format';
import {
  alreadyCommittedReason,
  commitNotApplied,
  completeDroppedCompaction,
  compactsLevel0AtCommit,
  parseRowKind,
  replanOnBucketConflict,
  rowKindToString,
  WriteValidationError,
  type CommitResult,
  type Committable,
  type OverwritePlan,
  type Table,
  type TableCommit,
  type TableWrite,
} from '@tidemark/core';
import type { CommandContext } from '../context.js';
import { writeJsonSummary } from '../output/progress.js';
import { defineCommand } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { InputError, readCsv, readJsonLines, type RowChunk } from '../input/row-input.js';
import { replayableInput, type ReplayableInput } from '../input/replayable-input.js';
import { parseKeyValues } from './create.js';
import type { ProgressReporter } from '../output/progress.js';
import { overwritePlanJson, partitionText, plural, printList, printOverwritePlan } from './row-change-output.js';
import { dryRunOption, jsonOption, printLine, progressFor, quietOption, tableArgument, withTable } from './shared.js';

/** `tidemark write`: append or overwrite rows. */
export const writeCommand = defineCommand({
  name: 'write',
  summary: 'write rows from a file or stdin and commit them as one snapshot',
  usage: {
    synopsis: [
      'write <table> [--input <file> | -] [--format jsonl|csv|parquet] [--row-kind-field F] [--overwrite [--partition k=v]...] [--dry-run] [--commit-user U --commit-identifier N] [--json]',
    ],
    description:
      'JSON lines input uses the value formats `tidemark read --format jsonl` prints. On a primary-key table every row is an upsert ' +
      '(the latest row per key wins); with --row-kind-field F, field F of each row holds its kind: +I or +U (upsert), -U or -D ' +
      '(retract / delete the key); F is not a column. Prints the new snapshot id, or that the identifier was already committed by that user. ' +
      'With --dry-run the input is read and checked as the real write checks it, but nothing is written: it prints the rows per ' +
      'partition it would append, or with --overwrite the partitions that would be replaced, with their current data files and ' +
      'rows, and the rows each would get.',
    positionals: [tableArgument],
    options: {
      input: { type: 'string', valueName: 'file|-', description: 'input file, or - for stdin (default -)' },
      format: { type: 'string', valueName: 'fmt', choices: ['jsonl', 'csv', 'parquet'], description: 'input format (default jsonl)' },
      'row-kind-field': {
        type: 'string',
        valueName: 'F',
        description: 'primary-key tables: input field holding each row kind (+I, -U, +U, -D)',
      },
      overwrite: { type: 'boolean', description: 'replace the partitions written (or the given --partition)' },
      partition: { type: 'multiple', valueName: 'k=v', description: 'static partition to overwrite' },
      'dry-run': { ...dryRunOption, description: 'check the input and report what it would append (or replace), writing nothing' },
      'commit-user': { type: 'string', valueName: 'U', description: 'commit user, for idempotent retries' },
      'commit-identifier': { type: 'integer', min: 0, valueName: 'N', description: 'commit identifier; skipped if U already committed it' },
      quiet: quietOption,
      json: jsonOption,
    },
    requires: { partition: 'overwrite', 'commit-identifier': 'commit-user', 'commit-user': 'commit-identifier' },
  },
  async run(args, ctx) {
    const o = args.options;
    const partition = parseKeyValues(o.partition, '--partition', 'write');
    const format = o.format ?? 'jsonl';
    const inputArg = o.input ?? '-';
    if (format === 'parquet' && inputArg === '-') throw new UsageError("'--format parquet' needs '--input <file>'", 'write');
    const inputPath = inputArg === '-' ? undefined : resolvePath(ctx.cwd, inputArg);
    if (inputPath !== undefined) await checkInputFile(inputPath, format);

    const rowKindField = o['row-kind-field'];
    await withTable(args.named['table']!, ctx, async (table) => {
      if (rowKindField !== undefined) checkRowKindField(table.schema().fields, rowKindField, table.isPrimaryKeyTable, table.location);
      const commit = table.newCommit(o['commit-user'] !== undefined ? { commitUser: o['commit-user'] } : {});
      const identifier = o['commit-identifier'] !== undefined ? BigInt(o['commit-identifier']) : undefined;
      if (identifier !== undefined && (await alreadyCommitted(ctx, table.location, commit, identifier, o.json, o['dry-run']))) return;
      // A dynamic-bucket write whose bucket assignment went stale before its commit (a concurrent
      // writer placed the same new key, its base snapshot expired) writes its rows again, as
      // Table.append does: the input must then be readable again.
      const replans = table.isPrimaryKeyTable && table.context.options.bucket === -1 && !o.overwrite && !o['dry-run'];
      const input = format === 'parquet' ? undefined : await replayableInput(inputPath, ctx.stdin, replans);
      const attempt: WriteAttempt = {
        table,
        commit,
        format,
        inputPath,
        input,
        rowKindField,
        identifier,
        dryRun: o['dry-run'],
        overwrite: o.overwrite,
        partition,
        quiet: o.quiet,
      };
      let outcome: WriteOutcome;
      try {
        outcome = replans
          ? await replanOnBucketConflict(table.context.options, () => writeOnce(ctx, attempt))
          : await writeOnce(ctx, attempt);
      } finally {
        await input?.close();
      }
      outcome = await finishCompaction(attempt, outcome);
      await printOutcome(ctx, table.location, table.paths, outcome, o.overwrite, o.json);
    });
  },
});

/** Prints that `identifier` was already committed, when it was; true then (nothing is written). */
async function alreadyCommitted(
  ctx: CommandContext,
  location: string,
  commit: TableCommit,
  identifier: bigint,
  json: boolean,
  dryRun: boolean,
): Promise<boolean> {
  // Checked before reading the input, so a retried job writes no data files at all.
  const last = await commit.lastCommittedIdentifier();
  if (last === null || identifier > last) return false;
  const reason = alreadyCommittedReason(identifier, commit.commitUser, last);
  if (json)
    await printLine(
      ctx,
      JSON.stringify({ command: 'write', table: location, ...(dryRun ? { dryRun } : {}), status: 'skipped', rows: 0, reason }),
    );
  else await printLine(ctx, `skipped: ${reason}`);
  return true;
}

/** What one attempt of a write needs. */
interface WriteAttempt {
  readonly table: Table;
  readonly commit: TableCommit;
  readonly format: string;
  readonly inputPath: string | undefined;
  /** The text input (jsonl, csv); undefined for Parquet, which is read from `inputPath`. */
  readonly input: ReplayableInput | undefined;
  readonly rowKindField: string | undefined;
  readonly identifier: bigint | undefined;
  readonly dryRun: boolean;
  readonly overwrite: boolean;
  readonly partition: ReadonlyMap<string, string>;
  readonly quiet: boolean;
}

/** What an attempt did: rows read, row kinds, and the commit result or the dry run's plan. */
interface WriteOutcome {
  readonly rows: number;
  readonly kinds: ReadonlyMap<string, number>;
  readonly result?: CommitResult;
  /** What was committed (for a compaction the commit dropped). */
  readonly committable?: Committable;
  readonly plan?: OverwritePlan;
  /** A dry run without overwrite: the rows it would append per partition. */
  readonly appendPlan?: ReadonlyArray<{ readonly partition: Uint8Array; readonly rows: number }>;
}

/**
 * A compaction the commit dropped (a concurrent writer committed to the same buckets first) done
 * again, so that the rows are visible when the command returns. Runs after the writer's files are
 * committed: an error from here on must not discard them.
 */
async function finishCompaction(a: WriteAttempt, outcome: WriteOutcome): Promise<WriteOutcome> {
  if (outcome.result === undefined || outcome.committable === undefined) return outcome;
  return { ...outcome, result: await completeDroppedCompaction(a.table, a.commit, outcome.committable, outcome.result) };
}

/** Reads the whole input into a new writer, then commits it (or, in a dry run, plans the overwrite). */
async function writeOnce(ctx: CommandContext, a: WriteAttempt): Promise<WriteOutcome> {
  // A dry run validates and routes the rows like the real writer, but buffers and writes nothing.
  const writer = a.table.newBatchWrite({
    ...(a.rowKindField !== undefined ? { rowKindField: a.rowKindField } : {}),
    ...(a.dryRun ? { dryRun: a.dryRun } : {}),
  });
  const inputSize = a.inputPath === undefined ? undefined : (await stat(a.inputPath)).size;
  const progress = progressFor(ctx, 'writing', 'rows', undefined, inputSize, { quiet: a.quiet, showRate: true });
  const partition = a.partition.size > 0 ? { partition: Object.fromEntries(a.partition) } : {};
  try {
    const { rows, kinds } = await writeInput(ctx, a, writer, progress, inputSize);
    progress.finish();
    if (a.dryRun && a.overwrite) return { rows, kinds, plan: await a.commit.planOverwrite(writer.routedRows(), partition) };
    if (a.dryRun) return { rows, kinds, appendPlan: writer.routedRows() };
    const messages = await writer.prepareCommit();
    const committable = { messages, identifier: a.identifier ?? BATCH_COMMIT_IDENTIFIER };
    try {
      // A dropped compaction of such a table is done again (finishCompaction): not a warning.
      const quiet = compactsLevel0AtCommit(a.table) ? { logDroppedCompaction: false } : {};
      const result = a.overwrite ? await a.commit.overwrite(committable, partition) : await a.commit.commit(committable, quiet);
      return { rows, kinds, result, committable };
    } catch (e) {
      // A refused commit (e.g. rows outside the --partition overwritten) leaves no data file.
      if (commitNotApplied(e)) await writer.discard(messages).catch(() => undefined);
      throw e;
    }
  } catch (e) {
    progress.finish();
    await writer.abort().catch(() => undefined);
    throw e;
  } finally {
    await writer.close();
  }
}

/** Feeds the input to `writer`, counting rows (and row kinds) on the way. */
async function writeInput(
  ctx: CommandContext,
  a: WriteAttempt,
  writer: TableWrite,
  progress: ProgressReporter,
  inputSize: number | undefined,
): Promise<{ rows: number; kinds: Map<string, number> }> {
  let rows = 0;
  const kinds = new Map<string, number>();
  if (a.input === undefined) {
    for await (const batch of readParquetInput(a.inputPath!)) {
      ctx.signal.throwIfAborted();
      await writer.write(batch);
      rows += batch.numRows;
      progress.add(batch.numRows);
    }
    progress.add(0, inputSize ?? 0);
    return { rows, kinds };
  }
  const stream = countingBytes(a.input.open(), progress);
  // The row kind field travels with the rows as a string; the writer takes it out.
  const fields = a.rowKindField === undefined ? a.table.schema().fields : [...a.table.schema().fields, rowKindPseudoField(a.rowKindField)];
  const chunks = a.format === 'csv' ? readCsv(stream, fields) : readJsonLines(stream, fields);
  for await (const chunk of chunks) {
    ctx.signal.throwIfAborted();
    if (a.rowKindField !== undefined) countRowKinds(chunk, a.rowKindField, kinds);
    await writeChunk(writer, chunk);
    rows += chunk.rows.length;
    progress.add(chunk.rows.length);
  }
  return { rows, kinds };
}

/** Prints what the write did: the committed snapshot, a skip, an empty input or the dry run's plan. */
async function printOutcome(
  ctx: CommandContext,
  location: string,
  paths: Pick<Table['paths'], 'partitionSpec'>,
  outcome: WriteOutcome,
  overwrite: boolean,
  json: boolean,
): Promise<void> {
  const { rows, kinds, result, plan, appendPlan } = outcome;
  if (plan !== undefined) {
    await printPlan(ctx, location, rows, plan, json);
    return;
  }
  if (appendPlan !== undefined) {
    await printAppendPlan(
      ctx,
      location,
      rows,
      appendPlan.map((p) => ({ partition: paths.partitionSpec(p.partition), rowsWritten: p.rows })),
      json,
    );
    return;
  }
  if (result === undefined) return;
  if (json) {
    const detail =
      result.status === 'committed' ? { snapshotId: result.snapshotId } : result.status === 'skipped' ? { reason: result.reason } : {};
    await printLine(ctx, JSON.stringify({ command: 'write', table: location, status: result.status, rows, overwrite, ...detail }));
    return;
  }
  switch (result.status) {
    case 'committed':
      await printLine(
        ctx,
        `committed snapshot ${result.snapshotId} (${rows} row${rows === 1 ? '' : 's'}${describeKinds(kinds)}${overwrite ? ', overwrite' : ''})`,
      );
      break;
    case 'skipped':
      await printLine(ctx, `skipped: ${result.reason}`);
      break;
    case 'empty':
      await printLine(ctx, 'nothing to commit: the input has no rows; no snapshot was created');
      break;
  }
}

/** Prints what `write --dry-run` (without --overwrite) would append, text or `--json`. */
async function printAppendPlan(
  ctx: CommandContext,
  location: string,
  rows: number,
  partitions: ReadonlyArray<{ partition: Record<string, string>; rowsWritten: number }>,
  json: boolean,
): Promise<void> {
  const sorted = [...partitions].sort((a, b) => partitionText(a.partition).localeCompare(partitionText(b.partition)));
  if (json) {
    const summary = { command: 'write', table: location, dryRun: true, status: 'dry-run', rows, overwrite: false, partitions: sorted };
    await writeJsonSummary(ctx.stdout, summary, ctx.signal);
    return;
  }
  await printLine(
    ctx,
    rows === 0
      ? 'dry run: the input has no rows; a real run would create no snapshot; nothing was written'
      : `dry run: ${plural(rows, 'row')} checked; would append them to ${plural(sorted.length, 'partition')} as one snapshot; nothing was written`,
  );
  await printList(
    ctx,
    sorted.map((p) => `partition ${partitionText(p.partition)}: ${plural(p.rowsWritten, 'row')}`),
    'partition',
  );
}

/** Prints the plan of `write --overwrite --dry-run`, text or `--json`. */
async function printPlan(ctx: CommandContext, location: string, rows: number, plan: OverwritePlan, json: boolean): Promise<void> {
  if (json) {
    const summary = {
      command: 'write',
      table: location,
      dryRun: true,
      status: 'dry-run',
      rows,
      overwrite: true,
      ...overwritePlanJson(plan),
    };
    await writeJsonSummary(ctx.stdout, summary, ctx.signal);
  } else await printOverwritePlan(ctx, plan);
}

/** Refuses a missing or unreadable input up front, naming it, before the table is touched. */
async function checkInputFile(path: string, format: string): Promise<void> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new InputError(`input file ${path} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as Error).message})`}`, {
      cause: e,
    });
  }
  if (st.isDirectory()) throw new InputError(`input file ${path} is a directory`);
  // Parquet is read from its end (the footer) by byte ranges: a pipe or device has neither.
  if (format === 'parquet' && !st.isFile()) {
    throw new InputError(`input file ${path} is not a regular file: '--format parquet' reads a file by byte ranges`);
  }
  if (format === 'parquet' && st.size === 0) throw new InputError(`input file ${path} is empty, not a Parquet file`);
  try {
    await access(path, fsConstants.R_OK);
  } catch (e) {
    throw new InputError(`input file ${path} cannot be read (${(e as { code?: string }).code ?? (e as Error).message})`, { cause: e });
  }
}

/** Writes one chunk, turning the writer's row index into the input line number. */
async function writeChunk(writer: TableWrite, chunk: RowChunk): Promise<void> {
  try {
    await writer.write(chunk.rows);
  } catch (e) {
    if (e instanceof WriteValidationError && e.rowIndex !== undefined) {
      const line = chunk.lines[e.rowIndex];
      throw new InputError(`input line ${line}${e.column !== undefined ? `, column '${e.column}'` : ''}: ${e.detail}`, { cause: e });
    }
    throw e;
  }
}

/** Row kinds as Paimon spells them: insert, update before, update after, delete. */
const ROW_KINDS = ['+I', '-U', '+U', '-D'] as const;

/**
 * Refuses a row kind field on an append table or one that names a column.
 *
 * @throws CliError naming the field and the table.
 */
function checkRowKindField(fields: readonly DataField[], name: string, primaryKey: boolean, location: string): void {
  if (!primaryKey) {
    throw new CliError(
      `--row-kind-field applies to primary-key tables only; ${location} has no primary key (its rows are appended as inserts)`,
    );
  }
  if (fields.some((f) => f.name === name)) {
    throw new CliError(`--row-kind-field '${name}' is a column of ${location}; name an input field that is not a column`);
  }
}

/** The row kind field as the input readers see it: a nullable string. */
function rowKindPseudoField(name: string): DataField {
  return { id: -1, name, type: { root: 'VARCHAR', nullable: true, length: 2147483647 } as DataType };
}

/**
 * Checks each row's kind (absent or null means +I) and counts them.
 *
 * @throws InputError naming the input line of a row whose kind is not one of +I, -U, +U, -D.
 */
function countRowKinds(chunk: RowChunk, field: string, counts: Map<string, number>): void {
  chunk.rows.forEach((row, i) => {
    const raw = row[field] ?? '+I';
    let kind: string;
    try {
      kind = rowKindToString(parseRowKind(raw as string));
    } catch {
      throw new InputError(
        `input line ${chunk.lines[i]}: field '${field}' must be one of ${ROW_KINDS.join(', ')}; got ${JSON.stringify(raw)}`,
      );
    }
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  });
}

/** `: 6 +I, 2 +U, 1 -D` (non-zero kinds, in Paimon's order), '' when no row kind field was given. */
function describeKinds(kinds: ReadonlyMap<string, number>): string {
  const parts = ROW_KINDS.filter((k) => (kinds.get(k) ?? 0) > 0).map((k) => `${kinds.get(k)} ${k}`);
  return parts.length === 0 ? '' : `: ${parts.join(', ')}`;
}

/**
 * The batches of a Parquet input file. A file that does not decode is the user's input, not a
 * broken table: it is reported as an input error naming the file.
 */
async function* readParquetInput(path: string): ReturnType<typeof readParquetFile> {
  const io = new LocalFileIO();
  try {
    yield* readParquetFile(io, path);
  } catch (e) {
    if (e instanceof CorruptFileError) throw new InputError(`input ${e.message}`, { cause: e });
    throw e;
  } finally {
    await io.close();
  }
}

/** `input` as a stream that counts the bytes read on `progress` (against the file size, when known). */
function countingBytes(input: Readable, progress: ProgressReporter): Readable {
  return Readable.from(
    (async function* () {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        progress.add(0, typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
}
