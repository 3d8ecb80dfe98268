/**
 * The Avro writer schemas of Paimon's manifest-type files, field for field as Java Paimon 1.4
 * writes them (record names, field order, nullable unions with `default: null`, the
 * `timestamp-millis` logical type of `_CREATION_TIME`).
 *
 * The writers store `JSON.stringify` of these objects as `avro.schema`, which reproduces Java's
 * compact header text byte for byte. Readers never use these: they decode with each file's own
 * writer schema and map fields by name, so older files (fewer trailing nullable fields) and newer
 * files (extra fields such as master's `_WRITE_COLS_SEQUENCES`) are both accepted.
 */

const NAMESPACE = 'org.apache.paimon.avro.generated';

/** `["null", T]` with `default: null`, as Java writes nullable fields. */
function nullable(name: string, type: unknown): Record<string, unknown> {
  return { name, type: ['null', type], default: null };
}

/** SimpleStats record (`_MIN_VALUES`, `_MAX_VALUES`, `_NULL_COUNTS`) under a given record name. */
function simpleStatsSchema(recordName: string): Record<string, unknown> {
  return {
    type: 'record',
    name: recordName,
    fields: [
      { name: '_MIN_VALUES', type: 'bytes' },
      { name: '_MAX_VALUES', type: 'bytes' },
      nullable('_NULL_COUNTS', { type: 'array', items: ['null', 'long'] }),
    ],
  };
}

/** Writer schema of data manifest files (`manifest-*`), one record per ManifestEntry. */
export const MANIFEST_ENTRY_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'record',
  name: 'record',
  namespace: NAMESPACE,
  fields: [
    { name: '_VERSION', type: 'int' },
    { name: '_KIND', type: 'int' },
    { name: '_PARTITION', type: 'bytes' },
    { name: '_BUCKET', type: 'int' },
    { name: '_TOTAL_BUCKETS', type: 'int' },
    {
      name: '_FILE',
      type: {
        type: 'record',
        name: 'record__FILE',
        fields: [
          { name: '_FILE_NAME', type: 'string' },
          { name: '_FILE_SIZE', type: 'long' },
          { name: '_ROW_COUNT', type: 'long' },
          { name: '_MIN_KEY', type: 'bytes' },
          { name: '_MAX_KEY', type: 'bytes' },
          { name: '_KEY_STATS', type: simpleStatsSchema('record__FILE__KEY_STATS') },
          { name: '_VALUE_STATS', type: simpleStatsSchema('record__FILE__VALUE_STATS') },
          { name: '_MIN_SEQUENCE_NUMBER', type: 'long' },
          { name: '_MAX_SEQUENCE_NUMBER', type: 'long' },
          { name: '_SCHEMA_ID', type: 'long' },
          { name: '_LEVEL', type: 'int' },
          { name: '_EXTRA_FILES', type: { type: 'array', items: 'string' } },
          nullable('_CREATION_TIME', { type: 'long', logicalType: 'timestamp-millis' }),
          nullable('_DELETE_ROW_COUNT', 'long'),
          nullable('_EMBEDDED_FILE_INDEX', 'bytes'),
          nullable('_FILE_SOURCE', 'int'),
          nullable('_VALUE_STATS_COLS', { type: 'array', items: 'string' }),
          nullable('_EXTERNAL_PATH', 'string'),
          nullable('_FIRST_ROW_ID', 'long'),
          nullable('_WRITE_COLS', { type: 'array', items: 'string' }),
        ],
      },
    },
  ],
};

/** Writer schema of manifest lists (`manifest-list-*`), one record per ManifestFileMeta. */
export const MANIFEST_FILE_META_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'record',
  name: 'record',
  namespace: NAMESPACE,
  fields: [
    { name: '_VERSION', type: 'int' },
    { name: '_FILE_NAME', type: 'string' },
    { name: '_FILE_SIZE', type: 'long' },
    { name: '_NUM_ADDED_FILES', type: 'long' },
    { name: '_NUM_DELETED_FILES', type: 'long' },
    { name: '_PARTITION_STATS', type: simpleStatsSchema('record__PARTITION_STATS') },
    { name: '_SCHEMA_ID', type: 'long' },
    nullable('_MIN_BUCKET', 'int'),
    nullable('_MAX_BUCKET', 'int'),
    nullable('_MIN_LEVEL', 'int'),
    nullable('_MAX_LEVEL', 'int'),
    nullable('_MIN_ROW_ID', 'long'),
    nullable('_MAX_ROW_ID', 'long'),
  ],
};

/** Writer schema of index manifests (`index-manifest-*`), one record per IndexManifestEntry. */
export const INDEX_MANIFEST_ENTRY_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'record',
  name: 'record',
  namespace: NAMESPACE,
  fields: [
    { name: '_VERSION', type: 'int' },
    { name: '_KIND', type: 'int' },
    { name: '_PARTITION', type: 'bytes' },
    { name: '_BUCKET', type: 'int' },
    { name: '_INDEX_TYPE', type: 'string' },
    { name: '_FILE_NAME', type: 'string' },
    { name: '_FILE_SIZE', type: 'long' },
    { name: '_ROW_COUNT', type: 'long' },
    nullable('_DELETIONS_VECTORS_RANGES', {
      type: 'array',
      items: [
        'null',
        {
          type: 'record',
          name: 'record__DELETIONS_VECTORS_RANGES',
          fields: [
            { name: 'f0', type: 'string' },
            { name: 'f1', type: 'int' },
            { name: 'f2', type: 'int' },
            nullable('_CARDINALITY', 'long'),
          ],
        },
      ],
    }),
    nullable('_EXTERNAL_PATH', 'string'),
    nullable('_GLOBAL_INDEX', {
      type: 'record',
      name: 'record__GLOBAL_INDEX',
      fields: [
        { name: '_ROW_RANGE_START', type: 'long' },
        { name: '_ROW_RANGE_END', type: 'long' },
        { name: '_INDEX_FIELD_ID', type: 'int' },
        nullable('_EXTRA_FIELD_IDS', { type: 'array', items: 'int' }),
        nullable('_INDEX_META', 'bytes'),
        nullable('_SOURCE_META', 'bytes'),
      ],
    }),
  ],
};

/** `_VERSION` written in data manifests and manifest lists. */
export const MANIFEST_FORMAT_VERSION = 2;
/** `_VERSION` written in index manifests. */
export const INDEX_MANIFEST_FORMAT_VERSION = 1;
