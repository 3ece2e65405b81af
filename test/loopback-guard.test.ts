import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import bench from '../vitest.bench.config.ts';
import suite from '../vitest.config.ts';
import { connectTarget, isLoopback } from './helpers/loopback-guard.ts';
import { tempDirectory } from './helpers/stores.ts';

const ROOT = join(import.meta.dirname, '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const FIXTURE_CONFIG = join(ROOT, 'test', 'helpers', 'loopback-guard-fixture', 'vitest.config.ts');

interface JsonReport {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs the fixture's tests under the suite's configuration (vitest's JSON report), as `npm test` would run them. */
async function runFixture(): Promise<{ code: number; report: JsonReport }> {
  const output = join(tempDirectory(), 'report.json');
  const args = [VITEST, 'run', '--config', FIXTURE_CONFIG, '--reporter=json', `--outputFile=${output}`];
  // A clean environment: none of this worker's VITEST_* variables, which would make the run a worker.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, CI: 'true' };
  const code = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env }).then(
    () => 0,
    (error: { code: number }) => error.code,
  );
  return { code, report: JSON.parse(readFileSync(output, 'utf8')) as JsonReport };
}

describe('the loopback guard', () => {
  it('fails a test that connects past loopback, by address or by name, naming where, and passes one that stays', async () => {
    const { code, report } = await runFixture();
    expect(code).toBe(1);
    const results = Object.fromEntries(report.testResults[0]!.assertionResults.map((test) => [test.title, test]));
    expect(results['stays on loopback']!.status).toBe('passed');
    expect(results['connects to an address past loopback']!.status).toBe('failed');
    expect(results['connects to an address past loopback']!.failureMessages.join('\n')).toContain('connected past loopback to 192.0.2.1:9');
    expect(results['fetches from a name past loopback']!.status).toBe('failed');
    expect(results['fetches from a name past loopback']!.failureMessages.join('\n')).toContain(
      'connected past loopback to example.invalid:80',
    );
  });

  it('reads where a connection goes as net does, and knows loopback by address and by name', () => {
    expect(connectTarget([[{ host: '192.0.2.1', port: 443 }, () => undefined]])).toEqual({ host: '192.0.2.1', port: 443 });
    expect(connectTarget([5432, 'db.internal'])).toEqual({ host: 'db.internal', port: 5432 });
    expect(connectTarget([{ port: 6379 }])).toEqual({ host: 'localhost', port: 6379 });
    expect(connectTarget([{ path: '/tmp/.s.PGSQL.5432' }])).toBeUndefined();
    expect(connectTarget(['/var/run/redis.sock'])).toBeUndefined();
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      'localhost',
      'api.localhost',
      'LOCALHOST',
    ])
      expect(isLoopback(host), host).toBe(true);
    for (const host of [
      '192.0.2.1',
      '169.254.169.254',
      '10.0.0.1',
      '::2',
      '2001:db8::1',
      '0.0.0.0',
      'metadata.google.internal.',
      'localhost.example.com',
    ])
      expect(isLoopback(host), host).toBe(false);
  });
});

describe('both vitest configurations', () => {
  it.each([
    ['vitest.config.ts', suite],
    ['vitest.bench.config.ts', bench],
  ])("%s: run the guard, and turn @apollo/gateway's telemetry off for the tests and their child processes", (_name, config) => {
    expect(config.test?.setupFiles).toContain('test/helpers/loopback-guard.ts');
    expect(config.test?.env).toMatchObject({ APOLLO_TELEMETRY_DISABLED: 'true' });
  });
});
