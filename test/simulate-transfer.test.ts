import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
const run = promisify(execFile);

/** Runs `npm run simulate:transfer -- <args>` (the script itself, with the test's Node). */
async function simulate(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('npm run simulate:transfer', () => {
  it('sends signed notifications the bank way and prints each reply, duplicates included', async () => {
    const { baseUrl, query } = await startApp();
    const { code, output } = await simulate(['--url', baseUrl, '--account', '1234567890', '--amount', '2500.50', '--count', '2', '--duplicate']);
    expect(code).toBe(0);
    expect(output.match(/→ HTTP 200 00 success/g)).toHaveLength(2);
    expect(output.match(/→ HTTP 200 01 duplicate transaction/g)).toHaveLength(2);
    const { data } = await query('{ collectionNotifications(accountNumber: "1234567890") { nodes { transactionAmount currency } } }');
    expect(data!.collectionNotifications.nodes).toEqual([
      { transactionAmount: '2500.50', currency: 'NGN' },
      { transactionAmount: '2500.50', currency: 'NGN' },
    ]);
  });

  it('refuses a bad argument with a message naming it, sending nothing', async () => {
    const { code, output } = await simulate(['--account', '12345']);
    expect(code).toBe(2);
    expect(output).toContain('--account must be 10 digits');
  });

  it('says so and exits non-zero when no subgraph answers', async () => {
    const { code, output } = await simulate(['--url', 'http://127.0.0.1:1']);
    expect(code).toBe(1);
    expect(output).toContain('failed');
  });
});
