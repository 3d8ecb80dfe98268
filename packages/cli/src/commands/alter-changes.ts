/**
 * The `tidemark alter` actions: their usage lines and the mapping from parsed command-line
 * arguments (positional words after the action, plus `--after` / `--first` / `--comment`) to
 * core's typed {@link SchemaChange}s. Core takes typed changes only; all argument handling is here.
 */
import { SchemaChanges, type ColumnPosition, type SchemaChange } from '@tidemark/core';
import { UsageError } from '../errors.js';

/** One alter action: its usage line and the arguments it needs at least. */
export interface AlterAction {
  readonly usage: string;
  readonly needs: readonly string[];
}

/** Every alter action, in the order `tidemark alter --help` lists them. */
export const ALTER_ACTIONS: Readonly<Record<string, AlterAction>> = {
  'add-column': { usage: 'add-column <name> <type> [--after <col> | --first] [--comment <text>]', needs: ['name', 'type'] },
  'drop-column': { usage: 'drop-column <name>', needs: ['name'] },
  'rename-column': { usage: 'rename-column <old> <new>', needs: ['name', 'new-name'] },
  'alter-type': { usage: 'alter-type <name> <type>', needs: ['name', 'type'] },
  'set-option': { usage: 'set-option <key>=<value> [<key>=<value> ...]', needs: ['key', 'value'] },
  'remove-option': { usage: 'remove-option <key> [<key> ...]', needs: ['key'] },
  'move-column': { usage: 'move-column <name> (--after <col> | --first)', needs: ['name'] },
  'comment-column': { usage: 'comment-column <name> <text>', needs: ['name', 'text'] },
  comment: { usage: 'comment <text>', needs: ['text'] },
};

/** The flags `tidemark alter` accepts (already parsed by args.ts). */
export interface AlterFlags {
  readonly after?: string | undefined;
  readonly first?: boolean | undefined;
  readonly comment?: string | undefined;
}

/**
 * Maps the words after `alter <table> <action>` and the flags to schema changes. A type may be
 * given as several words (`DECIMAL(10, 2) NOT NULL` unquoted); `set-option` takes `key value` or
 * `key=value [key=value ...]`.
 *
 * @throws UsageError naming the action and its usage when the arguments do not fit.
 */
export function alterChanges(action: string, words: readonly string[], flags: AlterFlags = {}): SchemaChange[] {
  const spec = ALTER_ACTIONS[action];
  if (spec === undefined) {
    throw new UsageError(`unknown alter action '${action}'; use ${Object.keys(ALTER_ACTIONS).join(', ')}`, 'alter');
  }
  const usage = spec.usage;
  if (words.length < spec.needs.length && !(action === 'set-option' && words.length >= 1 && words.every((w) => w.includes('=')))) {
    throw new UsageError(`'alter ${action}' needs ${spec.needs.map((p) => `<${p}>`).join(' ')}`, 'alter');
  }
  const fail = (msg: string): never => {
    throw new UsageError(`alter ${action}: ${msg}; usage: alter <table> ${usage}`, 'alter');
  };
  const allowFlags = (...names: Array<keyof AlterFlags>): void => {
    for (const k of ['after', 'first', 'comment'] as const) {
      const given = k === 'first' ? flags.first === true : flags[k] !== undefined;
      if (given && !names.includes(k)) fail(`--${k} does not apply`);
    }
  };
  const position = (): ColumnPosition | undefined => {
    if (flags.after !== undefined && flags.first) fail('give either --after or --first, not both');
    if (flags.first) return { kind: 'first' };
    if (flags.after !== undefined) return { kind: 'after', column: flags.after };
    return undefined;
  };
  const exactly = (n: number): void => {
    if (words.length !== n) fail(`expected ${n} argument${n === 1 ? '' : 's'}, got ${words.length}`);
  };
  switch (action) {
    case 'add-column': {
      allowFlags('after', 'first', 'comment');
      if (words.length < 2) fail('expected a column name and a type');
      const pos = position();
      return [
        SchemaChanges.addColumn(words[0]!, words.slice(1).join(' '), {
          ...(flags.comment !== undefined ? { description: flags.comment } : {}),
          ...(pos !== undefined ? { position: pos } : {}),
        }),
      ];
    }
    case 'drop-column':
      allowFlags();
      exactly(1);
      return [SchemaChanges.dropColumn(words[0]!)];
    case 'rename-column':
      allowFlags();
      exactly(2);
      return [SchemaChanges.renameColumn(words[0]!, words[1]!)];
    case 'alter-type':
      allowFlags();
      if (words.length < 2) fail('expected a column name and a type');
      return [SchemaChanges.alterType(words[0]!, words.slice(1).join(' '))];
    case 'move-column': {
      allowFlags('after', 'first');
      exactly(1);
      const pos = position();
      if (pos === undefined) return fail('give --after <col> or --first');
      return [SchemaChanges.moveColumn(words[0]!, pos)];
    }
    case 'set-option':
      allowFlags();
      if (words.length === 0) fail('expected at least one key=value');
      // `set-option key value` (two words, the first without '=') is one option.
      if (words.length === 2 && !words[0]!.includes('=')) return [SchemaChanges.setOption(words[0]!.trim(), words[1]!)];
      return words.map((kv) => {
        const eq = kv.indexOf('=');
        if (eq <= 0) return fail(`'${kv}' is not key=value`);
        return SchemaChanges.setOption(kv.slice(0, eq).trim(), kv.slice(eq + 1));
      });
    case 'remove-option':
      allowFlags();
      if (words.length === 0) fail('expected at least one option key');
      return words.map((k) => SchemaChanges.removeOption(k));
    case 'comment-column':
      allowFlags();
      if (words.length < 2) fail('expected a column name and a comment');
      return [SchemaChanges.updateColumnComment(words[0]!, words.slice(1).join(' '))];
    default:
      allowFlags();
      if (words.length === 0) fail('expected a comment');
      return [SchemaChanges.updateComment(words.join(' '))];
  }
}
