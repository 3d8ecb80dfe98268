/**
 * Where checkpoint states are kept: `<dir>/chk-<id>.json`, one immutable file per checkpoint,
 * created with `createIfAbsent` so a checkpoint is either wholly there or absent (a crash while
 * writing leaves no file, or at most a hidden temp file that is ignored). The latest checkpoint is
 * the highest id whose file decodes.
 */
import { LocalFileIO, joinPath, parseLocation, resolveFileIO, type FileIO, type ResolveFileIOOptions } from '@tidemark/storage';
import { deserializeCheckpointState, serializeCheckpointState, type CheckpointState } from './checkpoint-state.js';
import { CorruptStateError, SinkUsageError } from './errors.js';

/** Durable storage of checkpoint states. */
export interface CheckpointStateStore {
  /** Where the states live (for messages). */
  readonly location: string;
  /**
   * Stores the state of `state.checkpointId` atomically.
   *
   * @throws SinkUsageError when a state with that id already exists (checkpoint ids must increase).
   */
  save(state: CheckpointState): Promise<void>;
  /** The state with the highest id that decodes, or null when there is none. */
  latest(): Promise<CheckpointState | null>;
  /** Highest checkpoint id present (decodable or not), or null. */
  highestId(): Promise<bigint | null>;
  /** Deletes states with ids below `keepFrom` (best effort). */
  prune(keepFrom: bigint): Promise<void>;
  /** Releases the storage client when the store owns it. */
  close(): Promise<void>;
}

const NAME_RE = /^chk-(\d+)\.json$/;

/** Logger for skipped (undecodable) states. */
export interface StateStoreLogger {
  warn(message: string): void;
}

/**
 * A {@link CheckpointStateStore} on any {@link FileIO} location: an object-store prefix
 * (`s3://bucket/pipelines/p1`), a `memory://` store, or a directory.
 */
export class FileIOCheckpointStore implements CheckpointStateStore {
  constructor(
    readonly fileIO: FileIO,
    readonly location: string,
    private readonly options: { readonly ownsFileIO?: boolean; readonly logger?: StateStoreLogger } = {},
  ) {}

  /** Location of the state file of checkpoint `id`. */
  pathOf(id: bigint): string {
    return joinPath(this.location, `chk-${id}.json`);
  }

  async save(state: CheckpointState): Promise<void> {
    const path = this.pathOf(state.checkpointId);
    const result = await this.fileIO.createIfAbsent(path, serializeCheckpointState(state));
    if (result === 'already-exists') {
      throw new SinkUsageError(
        `checkpoint state ${path} already exists: checkpoint ids must increase (is another pipeline using state location ${this.location}?)`,
      );
    }
  }

  private async ids(): Promise<bigint[]> {
    const ids: bigint[] = [];
    for await (const f of this.fileIO.list(this.location, { recursive: false })) {
      const name = f.path.slice(f.path.lastIndexOf('/') + 1);
      const m = NAME_RE.exec(name);
      if (m) ids.push(BigInt(m[1]!));
    }
    return ids.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  }

  async latest(): Promise<CheckpointState | null> {
    for (const id of await this.ids()) {
      const path = this.pathOf(id);
      try {
        const state = deserializeCheckpointState(new TextDecoder().decode(await this.fileIO.read(path)), path);
        if (state.checkpointId !== id) throw new CorruptStateError(`${path}: holds checkpoint ${state.checkpointId}, not ${id}`);
        return state;
      } catch (e) {
        if (!(e instanceof CorruptStateError)) throw e;
        (this.options.logger ?? { warn: (m: string) => console.warn(`[tidemark] ${m}`) }).warn(
          `skipping undecodable checkpoint state: ${e.message}`,
        );
      }
    }
    return null;
  }

  async highestId(): Promise<bigint | null> {
    return (await this.ids())[0] ?? null;
  }

  async prune(keepFrom: bigint): Promise<void> {
    const old = (await this.ids()).filter((id) => id < keepFrom).map((id) => this.pathOf(id));
    if (old.length > 0) await this.fileIO.deleteMany(old);
  }

  async close(): Promise<void> {
    if (this.options.ownsFileIO) await this.fileIO.close();
  }
}

/** A {@link CheckpointStateStore} in a local directory (created on first save). */
export class LocalDirCheckpointStore extends FileIOCheckpointStore {
  constructor(dir: string, options: { readonly logger?: StateStoreLogger } = {}) {
    if (parseLocation(dir).scheme !== 'file') throw new SinkUsageError(`LocalDirCheckpointStore needs a local directory, got ${dir}`);
    super(new LocalFileIO(), dir, { ...options, ownsFileIO: true });
  }
}

/**
 * Opens the state store at `location`: a local directory for plain paths and `file://` URIs,
 * otherwise an object-store location resolved like table locations (`s3://…`, `memory://…`).
 */
export function openCheckpointStore(
  location: string,
  options: { readonly storage?: ResolveFileIOOptions; readonly fileIO?: FileIO; readonly logger?: StateStoreLogger } = {},
): CheckpointStateStore {
  const loc = location.replace(/\/+$/, '') || location;
  if (options.fileIO)
    return new FileIOCheckpointStore(options.fileIO, loc, { ownsFileIO: false, ...(options.logger ? { logger: options.logger } : {}) });
  if (parseLocation(loc).scheme === 'file') return new LocalDirCheckpointStore(loc, options.logger ? { logger: options.logger } : {});
  return new FileIOCheckpointStore(resolveFileIO(loc, options.storage ?? {}), loc, {
    ownsFileIO: true,
    ...(options.logger ? { logger: options.logger } : {}),
  });
}
