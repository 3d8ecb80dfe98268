/**
 * Suites that run the CLI or workers from the packages' builds (`dist/`) skip, with a visible
 * notice, where the packages are not built.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packages = fileURLToPath(new URL('../../packages/', import.meta.url));

/**
 * True when every one of `files` (paths below packages/, such as `cli/dist/main.js`) exists;
 * else prints that `suite` is skipped and how to build.
 */
export function packagesBuilt(suite: string, ...files: string[]): boolean {
  const built = files.every((f) => existsSync(join(packages, f)));
  if (!built) console.warn(`[tidemark] SKIPPED ${suite}: packages are not built (run \`npx turbo run build\`)`);
  return built;
}

/** The CLI and the Kafka source: what the Kafka CLI suites run. */
export const KAFKA_CLI_BUILD = ['cli/dist/main.js', 'sink/dist/kafka/kafka-source.js'] as const;
