import { defineConfig } from 'vitest/config';
import suite, { BENCH_RUNS } from './vitest.config.ts';

// `npm run test:bench`: only the runs under load (see BENCH_RUNS), one file at a time, since
// each measures under load and a second run beside it would only slow both.
export default defineConfig({
  ...suite,
  test: {
    ...suite.test,
    include: BENCH_RUNS,
    exclude: [...(suite.test?.exclude ?? [])].filter((glob) => !BENCH_RUNS.includes(glob)),
    maxWorkers: 1,
    // The suite's own, named here so the bench runs cannot lose them: nothing past loopback.
    env: { ...suite.test?.env, APOLLO_TELEMETRY_DISABLED: 'true' },
    setupFiles: ['test/helpers/loopback-guard.ts'],
  },
});
