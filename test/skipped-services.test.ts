import { describe, expect, it } from 'vitest';
import { skippedServicesNotice } from './helpers/services.ts';

// Printed once per run by vitest's globalSetup (test/helpers/skipped-services.ts), so a local run
// without PostgreSQL or Redis says what it left out instead of passing in silence.
describe('the notice of skipped PostgreSQL and Redis suites', () => {
  it('names each service whose variable is unset or blank', () => {
    expect(skippedServicesNotice({})).toBe(
      'PostgreSQL and Redis tests skipped: DATABASE_URL and REDIS_URL are not set (docs/layout.md, "Developing")',
    );
    expect(skippedServicesNotice({ DATABASE_URL: 'postgres://db/test', REDIS_URL: ' ' })).toBe(
      'Redis tests skipped: REDIS_URL is not set (docs/layout.md, "Developing")',
    );
    expect(skippedServicesNotice({ REDIS_URL: 'redis://cache:6379' })).toBe(
      'PostgreSQL tests skipped: DATABASE_URL is not set (docs/layout.md, "Developing")',
    );
  });

  it('says nothing when every service is given, nor under CI=true, where a missing one fails instead', () => {
    expect(skippedServicesNotice({ DATABASE_URL: 'postgres://db/test', REDIS_URL: 'redis://cache:6379' })).toBeUndefined();
    expect(skippedServicesNotice({ CI: 'true' })).toBeUndefined();
  });
});
