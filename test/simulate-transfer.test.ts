import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';

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

  it('sends a notification the subgraph refuses, and one that conflicts with what it stored: both end up in the quarantine', async () => {
    const { baseUrl, query } = await startApp();
    const invalid = await simulate(['--url', baseUrl, '--invalid']);
    expect(invalid.code).toBe(0);
    expect(invalid.output).toMatch(/ 012345678 NGN 1500\.00 → HTTP 200 02 rejected transaction/);
    const conflict = await simulate(['--url', baseUrl, '--conflict']);
    expect(conflict.code).toBe(0);
    expect(conflict.output).toMatch(/→ HTTP 200 00 success[^]*\(again, as NGN 91500\.00\) → HTTP 200 01 duplicate transaction/);
    // Kept once the replies have gone.
    const kinds = await waitFor(async () => {
      const { data } = await query('{ quarantinedDeliveries { nodes { kind reason detail } } }');
      const nodes = data!.quarantinedDeliveries.nodes as unknown[];
      return nodes.length === 2 ? nodes : undefined;
    });
    expect(kinds).toEqual([
      { kind: 'CONFLICT', reason: 'conflicting_duplicate', detail: 'transactionAmount 91500.00 (stored 1500.00); settledAmount 91500.00 (stored 1500.00)' },
      { kind: 'REJECTED', reason: 'invalid_account_number', detail: null },
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
