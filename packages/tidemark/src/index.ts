/**
 * `tidemark`: Apache Paimon-compatible tables for Node.js, in one package. This entry point holds
 * what applications use: the storage layer (`FileIO`, S3 settings), tables and catalogs (`openTable`,
 * `FileSystemCatalog`), the exactly-once sink and the maintenance jobs. The format codecs and the
 * CLI's building blocks are under `tidemark/format` and `tidemark/cli`; each package is also
 * reachable as `tidemark/<package>`.
 *
 * @packageDocumentation
 */
export * from '@tidemark/storage';
export * from '@tidemark/core';
export * from '@tidemark/sink';
export * from '@tidemark/maintenance';
