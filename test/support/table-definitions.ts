/**
 * Table definitions written compactly, for the many suites that create a small table: columns as in
 * SQL DDL (`'k INT NOT NULL'`), one line a table instead of one object a column, and table options
 * as the CLI's `--option` flags.
 */

/** One column as `{ name, type }` (what `TableSpec.fields` and the CLI's `--schema` JSON take). */
export interface Column {
  name: string;
  type: string;
}

/**
 * `columns('k INT NOT NULL', 'v STRING')` = `[{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }]`:
 * each argument is a column name, a space, and its Paimon type string.
 */
export function columns(...ddl: string[]): Column[] {
  return ddl.map((c) => {
    const space = c.indexOf(' ');
    if (space <= 0) throw new Error(`columns: '${c}' is not '<name> <type>'`);
    return { name: c.slice(0, space), type: c.slice(space + 1).trim() };
  });
}

/** `optionArgs({ bucket: '1' })` = `['--option', 'bucket=1']`: table options as `tidemark create` flags. */
export function optionArgs(options: Readonly<Record<string, string>>): string[] {
  return Object.entries(options).flatMap(([k, v]) => ['--option', `${k}=${v}`]);
}
