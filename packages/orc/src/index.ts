/**
 * `@tidemark/orc`: an ORC file reader producing Apache Arrow record batches, over any byte-range
 * source (local file, memory, object store).
 */
export { OrcReader, ROOT_COLUMN_NAME, type OrcReadOptions, type OrcReadStats } from './reader.js';
export { bytesSource, type OrcSource } from './source.js';
export { CorruptOrcFileError, OrcError, UnsupportedOrcFeatureError } from './errors.js';
export type { OrcLiteral, OrcPredicate } from './predicate.js';
export { TypeKind as OrcTypeKind, type ColumnStatistics as OrcColumnStatistics } from './proto.js';
export { UNION_NULL_BRANCH, type OrcTypeNode } from './schema.js';
export { TAIL_PREFETCH_BYTES } from './tail.js';
export { isUtcZone, zoneOffsetSeconds } from './timezone.js';
