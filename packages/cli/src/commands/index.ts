/** Every `tidemark` subcommand, in the order `tidemark --help` lists them. */
import type { Command } from '../command.js';
import { alterCommand } from './alter.js';
import { consumersCommand } from './consumers.js';
import { compactManifestsCommand } from './compact-manifests.js';
import { compactCommand } from './compact.js';
import { countCommand } from './count.js';
import { createCommand } from './create.js';
import { deleteCommand } from './delete.js';
import { updateCommand } from './update.js';
import { expireSnapshotsCommand } from './expire-snapshots.js';
import { expirePartitionsCommand } from './expire-partitions.js';
import { dropPartitionCommand } from './drop-partition.js';
import { partitionsCommand } from './partitions.js';
import { filesCommand } from './files.js';
import { ingestCommand } from './ingest.js';
import { inspectCommand } from './inspect.js';
import { maintainCommand } from './maintain.js';
import { readCommand } from './read.js';
import { removeOrphanFilesCommand } from './remove-orphan-files.js';
import { rollbackCommand } from './rollback.js';
import { schemaCommand } from './schema.js';
import { snapshotsCommand } from './snapshots.js';
import { sqlCommand } from './sql.js';
import { streamCommand, tailCommand } from './stream.js';
import { tagCommand } from './tag.js';
import { verifyCommand } from './verify.js';
import { writeCommand } from './write.js';
import { dbCommand, tableCommand } from './warehouse.js';

/** Every `tidemark` command, in the order `tidemark --help` lists them. */
export const commands: readonly Command[] = [
  readCommand,
  countCommand,
  sqlCommand,
  streamCommand,
  tailCommand,
  consumersCommand,
  snapshotsCommand,
  schemaCommand,
  filesCommand,
  partitionsCommand,
  inspectCommand,
  createCommand,
  writeCommand,
  deleteCommand,
  updateCommand,
  tagCommand,
  rollbackCommand,
  alterCommand,
  expireSnapshotsCommand,
  expirePartitionsCommand,
  dropPartitionCommand,
  removeOrphanFilesCommand,
  compactCommand,
  compactManifestsCommand,
  maintainCommand,
  verifyCommand,
  ingestCommand,
  dbCommand,
  tableCommand,
];
