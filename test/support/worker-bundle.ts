/**
 * Bundles a worker of test/workers/ to one ES module with rolldown (vite's bundler, installed with
 * vitest), so that child processes run the current sources of the packages, not their builds.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** The packages a worker may import, resolved to their sources. */
const PACKAGES = ['storage', 'format', 'core', 'maintenance'] as const;

/**
 * Writes `test/workers/<name>.ts` bundled to a file of its own (per test process) and returns its
 * path; remove it with {@link removeWorkerBundle}.
 */
export async function bundleWorker(name: string): Promise<string> {
  const { rolldown } = await import('rolldown');
  const src = (pkg: string): string => join(repo, 'packages', pkg, 'src', 'index.ts');
  const build = await rolldown({
    input: join(repo, 'test', 'workers', `${name}.ts`),
    platform: 'node',
    resolve: {
      alias: Object.fromEntries(PACKAGES.map((p) => [`@tidemark/${p}`, src(p)])),
      extensionAlias: { '.js': ['.ts', '.js'] },
    },
    external: (id: string) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('@tidemark/'),
    logLevel: 'silent',
  });
  // Inside node_modules so the bundle's bare imports (avsc, zstd, AWS SDK …) resolve.
  const file = join(repo, 'node_modules', '.cache', 'tidemark-tests', `${name}-${process.pid}.mjs`);
  await build.write({ file, format: 'esm' });
  await build.close();
  return file;
}

/** Removes a bundle {@link bundleWorker} wrote (nothing when `file` is empty: the bundling failed). */
export async function removeWorkerBundle(file: string): Promise<void> {
  if (file) await rm(file, { force: true });
}
