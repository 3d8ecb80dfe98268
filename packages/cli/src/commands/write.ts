import { createReadStream } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Readable } from 'node:stream';
import { LocalFileIO } from '@tidemark/storage';
import { readParquetFile } from '@tidemark/format';
import { WriteValidationError, type CommitResult, type TableWrite } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { InputError, readCsv, readJsonLines, type RowChunk } from '../input/row-input.js';
import { parseKeyValues } from './create.js';
import { printLine, tableArgument, withTable } from './shared.js';

/** `tidemark write`: append or overwrite rows. */
export const writeCommand = defineCommand({
  name: 'write',
  summary: 'write rows from a file or stdin and commit them as one snapshot',
  usage: {
    synopsis: ['write <table> [--input <file> | -] [--format jsonl|csv|parquet] [--overwrite [--partition k=v]...] [--commit-user U --commit-identifier N]'],
    description: 'JSON lines input uses the value formats `tidemark read --format jsonl` prints. Prints the new snapshot id, or that the identifier was already committed by that user.',
    positionals: [tableArgument],
    options: {
      input: { type: 'string', valueName: 'file|-', description: 'input file, or - for stdin (default -)' },
      format: { type: 'string', valueName: 'fmt', choices: ['jsonl', 'csv', 'parquet'], description: 'input format (default jsonl)' },
      overwrite: { type: 'boolean', description: 'replace the partitions written (or the given --partition)' },
      partition: { type: 'multiple', valueName: 'k=v', description: 'static partition to overwrite' },
      'commit-user': { type: 'string', valueName: 'U', description: 'commit user, for idempotent retries' },
      'commit-identifier': { type: 'integer', min: 0, valueName: 'N', description: 'commit identifier; skipped if U already committed it' },
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

    await withTable(args.named['table']!, ctx, async (table) => {
      const commit = table.newCommit(o['commit-user'] !== undefined ? { commitUser: o['commit-user'] } : {});
      const identifier = o['commit-identifier'] !== undefined ? BigInt(o['commit-identifier']) : undefined;
      if (identifier !== undefined) {
        // Checked before reading the input, so a retried job writes no data files at all.
        const todo = await commit.filterCommitted([{ identifier, messages: [] }]);
        if (todo.length === 0) {
          await printLine(ctx, `skipped: commit identifier ${identifier} of commit user '${commit.commitUser}' was already committed`);
          return;
        }
      }
      const writer = table.newBatchWrite();
      let rows = 0;
      let result: CommitResult;
      try {
        if (format === 'parquet') {
          for await (const batch of readParquetFile(new LocalFileIO(), inputPath!)) {
            ctx.signal.throwIfAborted();
            await writer.write(batch);
            rows += batch.numRows;
          }
        } else {
          const stream: Readable = inputPath === undefined ? ctx.stdin : createReadStream(inputPath);
          const fields = table.schema().fields;
          const chunks = format === 'csv' ? readCsv(stream, fields) : readJsonLines(stream, fields);
          for await (const chunk of chunks) {
            ctx.signal.throwIfAborted();
            await writeChunk(writer, chunk);
            rows += chunk.rows.length;
          }
        }
        const messages = await writer.prepareCommit();
        const committable = { messages, ...(identifier !== undefined ? { identifier } : {}) };
        result = o.overwrite
          ? await commit.overwrite(committable, partition.size > 0 ? { partition: Object.fromEntries(partition) } : {})
          : await commit.commit(committable);
      } catch (e) {
        await writer.abort().catch(() => undefined);
        throw e;
      } finally {
        await writer.close();
      }
      switch (result.status) {
        case 'committed':
          await printLine(ctx, `committed snapshot ${result.snapshotId} (${rows} row${rows === 1 ? '' : 's'}${o.overwrite ? ', overwrite' : ''})`);
          break;
        case 'skipped':
          await printLine(ctx, `skipped: ${result.reason}`);
          break;
        case 'empty':
          await printLine(ctx, 'nothing to commit: the input has no rows; no snapshot was created');
          break;
      }
    });
  },
});

/** Writes one chunk, turning the writer's row index into the input line number. */
async function writeChunk(writer: TableWrite, chunk: RowChunk): Promise<void> {
  try {
    await writer.write(chunk.rows);
  } catch (e) {
    if (e instanceof WriteValidationError && e.rowIndex !== undefined) {
      const line = chunk.lines[e.rowIndex];
      const where = [e.column !== undefined ? `column '${e.column}'` : undefined, `row ${e.rowIndex}`].filter((x) => x !== undefined).join(', ');
      const detail = e.message.startsWith(where + ': ') ? e.message.slice(where.length + 2) : e.message;
      throw new InputError(`input line ${line}${e.column !== undefined ? `, column '${e.column}'` : ''}: ${detail}`, { cause: e });
    }
    throw e;
  }
}
