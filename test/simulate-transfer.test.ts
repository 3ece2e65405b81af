import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PREFIXES } from '../src/sandbox/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { createTestClients, sandboxCollectionCredentials, urlsAt } from './helpers/bank-clients.ts';
import { liveBankEnv, startLiveApp } from './helpers/counting-bank.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { waitFor } from './helpers/wait.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
const run = promisify(execFile);

/** Runs `npm run simulate:transfer -- <args>` (the script itself, with the test's Node). */
async function simulate(args: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env } });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('npm run simulate:transfer', () => {
  it('sends signed notifications the bank way and prints each reply, duplicates included', async () => {
    const { baseUrl, query } = await startApp();
    const { code, output } = await simulate([
      '--url',
      baseUrl,
      '--account',
      '1234567890',
      '--amount',
      '2500.50',
      '--count',
      '2',
      '--duplicate',
    ]);
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
      {
        kind: 'CONFLICT',
        reason: 'conflicting_duplicate',
        detail: 'transactionAmount 91500.00 (stored 1500.00); settledAmount 91500.00 (stored 1500.00)',
      },
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

/** The collection client of the app's in-process sandbox bank, found the way the script finds it. */
async function sandboxBankOf(app: TestApp) {
  const { collectionConsole } = (await (await request(`${app.baseUrl}/sandbox/bank`)).body.json()) as { collectionConsole: string };
  const urls = { ...urlsAt('http://127.0.0.1:9'), collection: new URL(collectionConsole).origin + SANDBOX_PREFIXES.collection };
  return createTestClients(urls, { collectionCredentials: sandboxCollectionCredentials }).clients.collection;
}

const STORED = 'query ($id: ID!) { collectionNotification(settlementId: $id) { transactionAmount } }';

describe('npm run simulate:transfer against the in-process sandbox: through the sandbox bank', () => {
  it('has the sandbox bank make and deliver each transfer, so the bank holds what was stored', async () => {
    const app = await startApp();
    const { code, output } = await simulate(['--url', app.baseUrl, '--amount', '99999999999999.99', '--duplicate']);
    expect(code).toBe(0);
    expect(output).toContain('through the sandbox bank');
    expect(output).toMatch(/→ HTTP 200 00 success[^]*\(again\) → HTTP 200 01 duplicate transaction/);
    const settlementId = /#1 (\S+) 0123456789 NGN 99999999999999\.99/.exec(output)![1]!;
    expect((await app.query(STORED, { id: settlementId })).data?.collectionNotification).toEqual({
      transactionAmount: '99999999999999.99',
    });
    await expect((await sandboxBankOf(app)).verifyBySettlementId(settlementId)).resolves.toMatchObject({
      transactionAmount: '99999999999999.99',
      acknowledged: true,
    });
  });

  it('--lost: the bank records it and never delivers it, and its ids are printed to reconcile', async () => {
    const app = await startApp();
    const { code, output } = await simulate(['--url', app.baseUrl, '--lost', '--count', '2']);
    expect(code).toBe(0);
    const lost = [...output.matchAll(/never delivered it \(settlementId (\S+), sessionId (\S+)\)/g)].map((m) => ({
      settlementId: m[1]!,
      sessionId: m[2]!,
    }));
    expect(lost).toHaveLength(2);
    const bank = await sandboxBankOf(app);
    for (const { settlementId, sessionId } of lost) {
      expect((await app.query(STORED, { id: settlementId })).data?.collectionNotification).toBeNull();
      await expect(bank.verifyBySessionId(sessionId)).resolves.toMatchObject({
        settlementId,
        transactionAmount: '1500.0',
        acknowledged: false,
      });
    }
  });

  it('--forged: a signed delivery the bank never made is stored, and the bank does not know it', async () => {
    const app = await startApp();
    const { code, output } = await simulate(['--url', app.baseUrl, '--forged']);
    expect(code).toBe(0);
    expect(output).toMatch(/\(forged: the bank never made it\) → HTTP 200 00 success/);
    expect(output).not.toContain('through the sandbox bank');
    const settlementId = /#1 (\S+) /.exec(output)![1]!;
    expect((await app.query(STORED, { id: settlementId })).data?.collectionNotification).toEqual({ transactionAmount: '1500.00' });
    await expect((await sandboxBankOf(app)).verifyBySettlementId(settlementId)).resolves.toBeNull();
  });

  it('--tampered: the bank holds one amount, the webhook is told another', async () => {
    const app = await startApp();
    const { code, output } = await simulate(['--url', app.baseUrl, '--tampered', '--amount', '250.00']);
    expect(code).toBe(0);
    expect(output).toMatch(/\(tampered: posted as NGN 9250\.00, the bank holds NGN 250\.00\) → HTTP 200 00 success/);
    // One line for the transfer: it is held back to be tampered with, not lost.
    expect(output).not.toContain('lost:');
    const settlementId = /#1 (\S+) /.exec(output)![1]!;
    expect((await app.query(STORED, { id: settlementId })).data?.collectionNotification).toEqual({ transactionAmount: '9250.00' });
    await expect((await sandboxBankOf(app)).verifyBySettlementId(settlementId)).resolves.toMatchObject({ transactionAmount: '250.0' });
  });

  it.each([
    [['--lost', '--duplicate'], '--lost and --duplicate do not go together'],
    [['--lost', '--forged'], '--lost and --forged do not go together'],
    [['--forged', '--tampered'], '--forged and --tampered do not go together'],
    [['--tampered', '--conflict'], '--tampered and --conflict do not go together'],
    [['--invalid', '--lost'], '--lost and --invalid do not go together'],
  ])('refuses %j with a message naming both, sending nothing', async (flags, message) => {
    const { code, output } = await simulate(['--url', 'http://127.0.0.1:1', ...flags]);
    expect(code).toBe(2);
    expect(output).toContain(message);
  });
});

describe('npm run simulate:transfer against a live bank', () => {
  it('posts signed notifications itself, and says --lost and --tampered need the sandbox bank', async () => {
    const bank = await startFakeBank((_request, reply) => reply.status(404).json({}));
    const app = await startLiveApp(bank.url, { WEBHOOK_ALLOWED_IPS: '127.0.0.1' });
    const { WEBHOOK_CLIENT_ID, WEBHOOK_CLIENT_SECRET } = liveBankEnv(bank.url);
    const signing = { WEBHOOK_CLIENT_ID: WEBHOOK_CLIENT_ID!, WEBHOOK_CLIENT_SECRET: WEBHOOK_CLIENT_SECRET! };
    const sent = await simulate(['--url', app.baseUrl], signing);
    expect(sent.code).toBe(0);
    expect(sent.output).not.toContain('through the sandbox bank');
    expect(sent.output).toMatch(/#1 SIM\S+ 0123456789 NGN 1500\.00 → HTTP 200 00 success/);
    for (const flag of ['--lost', '--tampered']) {
      const refused = await simulate(['--url', app.baseUrl, flag], signing);
      expect(refused.code).toBe(2);
      expect(refused.output).toContain(`${flag} needs the in-process sandbox bank`);
    }
  });
});
