export * from './errors.js';
export * from './table-files.js';
export * from './expire-snapshots.js';
export * from './remove-orphan-files.js';
export * from './compact-plan.js';
export * from './compact-append.js';
export * from './compact-manifests.js';
export * from './verify-table.js';
