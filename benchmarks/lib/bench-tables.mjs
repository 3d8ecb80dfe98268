/**
 * The tables benchmarks create: columns written as in SQL DDL, and one call that creates a table
 * in a catalog and opens it.
 */

/**
 * `columns('id BIGINT NOT NULL', 'name STRING')` = `[{ name: 'id', type: 'BIGINT NOT NULL' }, { name: 'name', type: 'STRING' }]`:
 * each argument is a column name, a space, and its Paimon type string.
 */
export function columns(...ddl) {
  return ddl.map((c) => {
    const space = c.indexOf(' ');
    if (space <= 0) throw new Error(`columns: '${c}' is not '<name> <type>'`);
    return { name: c.slice(0, space), type: c.slice(space + 1).trim() };
  });
}

/**
 * Creates table `name` (`db.t`) from `spec` in the catalog at `warehouse` through `io`, and opens it
 * on `io`. `core` is the imported `@tidemark/core` (the benchmarks import it lazily).
 */
export async function createBenchTable(core, io, warehouse, name, spec) {
  const catalog = new core.FileSystemCatalog(warehouse, { fileIO: io });
  await catalog.createTable(name, spec);
  return core.openTable(catalog.tableLocation(name), { fileIO: io });
}
