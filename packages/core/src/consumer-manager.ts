/**
 * Consumers of streaming reads, stored as Paimon stores them: `consumer/consumer-<id>` (under the
 * branch's metadata root) holding `{"nextSnapshot" : N}`, the first snapshot the consumer has not
 * finished. Expiration keeps every snapshot from the smallest `nextSnapshot` on, and removes
 * consumers not updated for `consumer.expiration-time`.
 */
import { NotFoundError, joinPath, type FileIO } from '@tidemark/storage';
import { parseJson, stringifyJackson } from '@tidemark/format';
import { ConsumerError } from './errors.js';
import type { TablePaths } from './table-paths.js';

/** File name prefix of consumer files (Java `ConsumerManager.CONSUMER_PREFIX`). */
export const CONSUMER_PREFIX = 'consumer-';

/** One consumer: its id, next snapshot and when its file was last written. */
export interface ConsumerInfo {
  readonly id: string;
  readonly nextSnapshot: number;
  readonly lastModified: Date;
}

/** Reads and writes the consumers of one table (branch). */
export class ConsumerManager {
  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: Pick<TablePaths, 'metadataRoot'>,
  ) {}

  /** `<table>/consumer` (or the branch's). */
  get directory(): string {
    return joinPath(this.paths.metadataRoot, 'consumer');
  }

  /** Location of a consumer's file. */
  consumerPath(id: string): string {
    checkConsumerId(id);
    return joinPath(this.directory, `${CONSUMER_PREFIX}${id}`);
  }

  /** The consumer's next snapshot, or null when it has none. */
  async nextSnapshot(id: string): Promise<number | null> {
    const path = this.consumerPath(id);
    let bytes: Uint8Array;
    try {
      bytes = await this.fileIO.read(path);
    } catch (e) {
      if (e instanceof NotFoundError) return null;
      throw e;
    }
    return parseConsumer(bytes, path);
  }

  /** Records the consumer's progress (Java `resetConsumer`: an overwrite of its file). */
  async resetConsumer(id: string, nextSnapshot: number): Promise<void> {
    if (!Number.isSafeInteger(nextSnapshot) || nextSnapshot < 1) {
      throw new ConsumerError(`consumer '${id}': nextSnapshot must be a positive snapshot id, got ${nextSnapshot}`);
    }
    await this.fileIO.write(this.consumerPath(id), consumerJson(nextSnapshot));
  }

  /** Deletes the consumer; true when it existed. */
  async deleteConsumer(id: string): Promise<boolean> {
    const path = this.consumerPath(id);
    if (!(await this.fileIO.exists(path))) return false;
    await this.fileIO.delete(path);
    return true;
  }

  /** Every consumer, by id. Files removed while listing are skipped. */
  async list(): Promise<ConsumerInfo[]> {
    const out: ConsumerInfo[] = [];
    for await (const st of this.fileIO.list(this.directory, { recursive: false })) {
      const name = st.path.slice(st.path.lastIndexOf('/') + 1);
      if (!name.startsWith(CONSUMER_PREFIX) || name.length === CONSUMER_PREFIX.length) continue;
      let bytes: Uint8Array;
      try {
        bytes = await this.fileIO.read(st.path);
      } catch (e) {
        if (e instanceof NotFoundError) continue;
        throw e;
      }
      out.push({ id: name.slice(CONSUMER_PREFIX.length), nextSnapshot: parseConsumer(bytes, st.path), lastModified: st.lastModified });
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * Ids of the consumers whose next snapshot lies past `snapshotId`: after a rollback or a
   * fast-forward replaced the history from there on, they would skip the snapshots that reuse the
   * replaced ids unless they are moved back ({@link resetConsumer}).
   */
  async idsPast(snapshotId: number): Promise<string[]> {
    return (await this.list()).filter((c) => c.nextSnapshot > snapshotId).map((c) => c.id);
  }

  /** Smallest `nextSnapshot` of all consumers, or null without consumers. */
  async minNextSnapshot(): Promise<number | null> {
    let min: number | null = null;
    for (const c of await this.list()) if (min === null || c.nextSnapshot < min) min = c.nextSnapshot;
    return min;
  }

  /**
   * Deletes the consumers whose file was last written before `before` (epoch millis), as Java's
   * `ConsumerManager.expire`; returns their ids.
   */
  async expire(before: number): Promise<string[]> {
    const gone: string[] = [];
    for (const c of await this.list()) {
      if (c.lastModified.getTime() >= before) continue;
      await this.fileIO.delete(this.consumerPath(c.id));
      gone.push(c.id);
    }
    return gone;
  }
}

/** The JSON Java writes for a consumer (Jackson's default pretty printer). */
export function consumerJson(nextSnapshot: number): string {
  return stringifyJackson({ nextSnapshot });
}

function parseConsumer(bytes: Uint8Array, path: string): number {
  let next: unknown;
  try {
    next = (parseJson(new TextDecoder().decode(bytes)) as Record<string, unknown>).nextSnapshot;
  } catch (cause) {
    throw new ConsumerError(`consumer file ${path} is not valid JSON; fix or delete it`, { cause });
  }
  const n = typeof next === 'bigint' ? Number(next) : next;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) {
    throw new ConsumerError(`consumer file ${path} has no numeric 'nextSnapshot'; fix or delete it`);
  }
  return n;
}

/** Consumer ids become file names: no path separators, no blanks, nothing empty. */
function checkConsumerId(id: string): void {
  if (typeof id !== 'string' || id === '' || /[/\\\s]/.test(id) || id === '.' || id === '..') {
    throw new ConsumerError(`invalid consumer id '${String(id)}': use a non-empty name without '/', '\\\\' or blanks`);
  }
}
