import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build (the package has no `exports`), as does every
    // CommonJS dependency (@apollo/subgraph); Vite would pick the `module` build and give tests a
    // second copy of graphql that production never has.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration suites start real servers, databases and child processes; none waits on a timer.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
