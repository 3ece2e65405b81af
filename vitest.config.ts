import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration suites start real servers, databases and child processes; none waits on a timer.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
