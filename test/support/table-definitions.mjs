/**
 * Table definitions written compactly, for the many suites (and worker processes and benchmarks)
 * that create a small table: columns as in SQL DDL (`'k INT NOT NULL'`), one line a table instead
 * of one object a column, and table options as the CLI's `--option` flags. Plain JavaScript so that
 * worker processes and benchmarks can load it; types in table-definitions.d.mts.
 */

/**
 * `columns('k INT NOT NULL', 'v STRING')` = `[{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }]`:
 * each argument is a column name, a space, and its Paimon type string.
 */
export function columns(...ddl) {
  return ddl.map((c) => {
    const space = c.indexOf(' ');
    if (space <= 0) throw new Error(`columns: '${c}' is not '<name> <type>'`);
    return { name: c.slice(0, space), type: c.slice(space + 1).trim() };
  });
}

/** `optionArgs({ bucket: '1' })` = `['--option', 'bucket=1']`: table options as `tidemark create` flags. */
export function optionArgs(options) {
  return Object.entries(options).flatMap(([k, v]) => ['--option', `${k}=${v}`]);
}
