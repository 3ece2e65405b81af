import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Runs under load, each needing the machine to itself: the bench's end-to-end runs (`npm run bench
 * -- --quick`, the growth mode), minutes that prove the bench works, and the read storm, which times
 * the webhook while heavy reads run and would time the other suites' load too beside them. CI runs
 * them in a step of their own, `npm run test:bench` (vitest.bench.config.ts, one file at a time),
 * after `npm test`.
 */
export const BENCH_RUNS = ['test/bench.test.ts', 'test/read-storm.test.ts'];

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build (the package has no `exports`), as does every
    // CommonJS dependency (@apollo/subgraph); Vite would pick the `module` build and give tests a
    // second copy of graphql that production never has.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...BENCH_RUNS],
    // Integration suites start real servers, databases and child processes; none waits on a timer.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // APOLLO_TELEMETRY_DISABLED: @apollo/gateway would otherwise export metrics to Apollo and probe the
    // AWS, GCP and Azure metadata servers; child processes inherit it with the rest of the environment.
    env: { LOG_LEVEL: 'silent', APOLLO_TELEMETRY_DISABLED: 'true' },
    // Fails a test that opens a connection past loopback (test/helpers/loopback-guard.ts).
    setupFiles: ['test/helpers/loopback-guard.ts'],
    // One line per run when PostgreSQL or Redis suites are skipped (DATABASE_URL, REDIS_URL unset).
    globalSetup: ['test/helpers/skipped-services.ts'],
    // Files wait on sockets, databases and child processes more than they compute: one worker more
    // than the cores keeps them busy (vitest's default is one fewer: a single worker on 2 cores).
    maxWorkers: availableParallelism() + 1,
    // A worker's files share its loaded modules instead of each paying to load Apollo, Fastify and
    // graphql again (about half the suite's CPU). Safe because no test patches a global or a module:
    // each builds its own app, metrics registry, store and pub/sub, and tracing runs in processes.
    isolate: false,
  },
});
