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
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
