/**
 * `@tidemark/storage`: one `FileIO` over local disk, memory (tests) and S3, with atomic
 * create-if-absent, paged listing, batched deletes and typed errors. Names are listed explicitly.
 */
export { type CreateResult, type FileIO, type FileStatus, type ListOptions } from './file-io.js';
export {
  ConditionalWriteNotSupportedError,
  DeleteManyError,
  InvalidRangeError,
  NotFoundError,
  StorageConfigError,
  StorageError,
} from './errors.js';
export { joinPath, parseLocation, type LocationScheme, type ParsedLocation } from './path.js';
export { MemoryFileIO } from './memory-file-io.js';
export { LocalFileIO } from './local-file-io.js';
export {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MULTIPART_THRESHOLD,
  DEFAULT_PART_SIZE,
  DEFAULT_REGION,
  isAwsEndpoint,
  MIN_PART_SIZE,
  readCoreSiteXml,
  resolveS3Config,
  S3Config,
  type S3ConfigFields,
  type S3Options,
  type S3SettingSource,
} from './s3-config.js';
export { isRetryableS3Error, s3ClientPoolSize, S3FileIO } from './s3-file-io.js';
export {
  clearConditionalWriteVerdicts,
  ensureConditionalWrites,
  PROBE_DIR,
  type ConditionalWriteTarget,
} from './conditional-write-probe.js';
export { resolveFileIO, type ResolveFileIOOptions } from './resolve.js';
