import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import suite from '../../../vitest.config.ts';

// The suite's configuration over the fixture alone: what test/loopback-guard.test.ts runs to see the
// guard fail a test of its own.
export default defineConfig({
  ...suite,
  test: {
    ...suite.test,
    root: join(import.meta.dirname, '..', '..', '..'),
    include: ['test/helpers/loopback-guard-fixture/*.fixture.ts'],
    exclude: [],
    globalSetup: [],
    maxWorkers: 1,
  },
});
