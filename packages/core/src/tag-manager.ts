/**
 * Reading tags (`tag/tag-<name>`): each tag file is a full snapshot plus tag fields
 * (docs/format.md, "Time travel and tags"). Tags are always found by listing; there are no hints.
 */
import type { FileIO } from '@tidemark/storage';
import { parseTag, type Tag } from '@tidemark/format';
import { TagNotFoundError } from './errors.js';
import { listFileNames, readIfExists } from './meta-files.js';
import { TAG_PREFIX, type TablePaths } from './table-paths.js';

/** How many tag names an unknown-tag error lists. */
const MAX_LISTED_TAGS = 10;

/** Reads the tags of one table (or branch). */
export class TagManager {
  constructor(
    readonly fileIO: FileIO,
    readonly paths: TablePaths,
  ) {}

  /** Streams tag names in listing order. Hidden temporary files (`.tag-x.<uuid>.tmp`) are skipped. */
  async *listNames(): AsyncGenerator<string> {
    for await (const name of listFileNames(this.fileIO, this.paths.tagDir)) {
      if (name.startsWith(TAG_PREFIX) && name.length > TAG_PREFIX.length) yield name.slice(TAG_PREFIX.length);
    }
  }

  /** All tag names, sorted. */
  async names(): Promise<string[]> {
    const out: string[] = [];
    for await (const n of this.listNames()) out.push(n);
    return out.sort();
  }

  /** All tags with their snapshots, ordered by snapshot id then name. */
  async list(): Promise<Array<{ name: string; tag: Tag }>> {
    const out: Array<{ name: string; tag: Tag }> = [];
    for (const name of await this.names()) {
      const tag = await this.tryGet(name);
      if (tag) out.push({ name, tag });
    }
    return out.sort((a, b) => a.tag.id - b.tag.id || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async exists(name: string): Promise<boolean> {
    return this.fileIO.exists(this.paths.tagPath(name));
  }

  /** The tag, or null when it does not exist. Corrupt tag files still throw. */
  async tryGet(name: string): Promise<Tag | null> {
    const path = this.paths.tagPath(name);
    const bytes = await readIfExists(this.fileIO, path);
    return bytes === null ? null : parseTag(bytes, path);
  }

  /**
   * The tag `name` (a full snapshot plus tag fields).
   *
   * @throws TagNotFoundError listing the available tags.
   */
  async tag(name: string): Promise<Tag> {
    const t = await this.tryGet(name);
    if (t !== null) return t;
    const all = await this.names();
    throw new TagNotFoundError(name, all.slice(0, MAX_LISTED_TAGS), all.length);
  }
}
