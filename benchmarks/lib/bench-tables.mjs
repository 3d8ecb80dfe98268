/**
 * The tables benchmarks create: columns written as in SQL DDL (`columns`, shared with the tests),
 * and one call that creates a table in a catalog and opens it.
 */

export { columns } from '../../test/support/table-definitions.mjs';

/**
 * Creates table `name` (`db.t`) from `spec` in the catalog at `warehouse` through `io`, and opens it
 * on `io`. `core` is the imported `@tidemark/core` (the benchmarks import it lazily).
 */
export async function createBenchTable(core, io, warehouse, name, spec) {
  const catalog = new core.FileSystemCatalog(warehouse, { fileIO: io });
  await catalog.createTable(name, spec);
  return core.openTable(catalog.tableLocation(name), { fileIO: io });
}
