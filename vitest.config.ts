import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const pkg = (name: string) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

// Tests run against the TypeScript sources, so `npm run test:unit` needs no build step.
export default defineConfig({
  resolve: {
    alias: {
      '@tidemark/storage': pkg('storage'),
      '@tidemark/orc': pkg('orc'),
      '@tidemark/format': pkg('format'),
      '@tidemark/core': pkg('core'),
      '@tidemark/sink': pkg('sink'),
      '@tidemark/maintenance': pkg('maintenance'),
      '@tidemark/cli': pkg('cli'),
    },
  },
  test: {
    // Package unit tests share their worker's module graph (isolate: false): a fresh process and module
    // graph per file cost more imports than most of these files run (118 unit files: 130 s and 194 s of
    // CPU isolated, 64 s and 85 s shared). They keep no state between files (env changes are restored).
    // The cross-package tests under test/ spawn processes, install signal handlers and patch the
    // environment: each keeps its own process. A unit file that replaces a module (`vi.mock`) is named
    // `*.mocked.test.ts` and gets a module graph of its own: in a shared graph the module is often
    // loaded already by an earlier file, and the mock would silently not apply.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts'],
          exclude: ['packages/*/test/**/*.mocked.test.ts'],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'unit-mocked', include: ['packages/*/test/**/*.mocked.test.ts'], isolate: true } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'] } },
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two test files at a time even on 2 cores (vitest's default there is one): most suites wait on
    // the S3 server or child processes, so the second file fills the idle core (full run: 1107 s -> 920 s).
    maxWorkers: 2,
    reporters: ['default'],
  },
});
