import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PREFIXES } from '../src/sandbox/index.ts';
import { Secret } from '../src/secret.ts';
import { startApp } from './helpers/app.ts';
import { confirmationOf } from './helpers/confirming.ts';
import { startLiveApp } from './helpers/counting-bank.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { startSandbox } from './helpers/sandbox.ts';
import { tempDirectory } from './helpers/stores.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
const PAIR = { WEBHOOK_CLIENT_ID: 'count-collection', WEBHOOK_CLIENT_SECRET: 'count-webhook-secret' };
const POSTED_STRAIGHT =
  /^http:\/\/127\.0\.0\.1:\d+ runs no in-process sandbox bank \(live mode, or the production rules\): each notification is posted straight to its webhook, so the bank holds none of them and confirmation will find them NOT_AT_BANK/;

/** Runs `npm run simulate:transfer -- <args>` with the webhook pair of liveBankEnv, in an empty directory; its output lines. */
async function simulate(args: string[]): Promise<{ code: number; lines: string[] }> {
  const run = promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: tempDirectory(), env: { PATH: process.env.PATH, ...PAIR } });
  const { code, stdout } = await run.then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  return { code, lines: stdout.trim().split('\n') };
}

describe('npm run simulate:transfer against a live-mode subgraph', () => {
  it('says first that it posts straight to the webhook, so the bank holds none of them: confirmation finds them NOT_AT_BANK', async () => {
    const bank = await startFakeCollectionBank({ clientId: PAIR.WEBHOOK_CLIENT_ID, clientSecret: PAIR.WEBHOOK_CLIENT_SECRET });
    const app = await startLiveApp(bank.url, {
      COLLECTION_CONFIRMATION: 'on',
      BANK_COLLECTION_URL: bank.url,
      // Whatever the wait between the two not-found answers NOT_AT_BANK takes, a short one here.
      CONFIRMATION_NOT_FOUND_RECHECK_S: '1',
    });
    const { code, lines } = await simulate(['--url', app.baseUrl]);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(POSTED_STRAIGHT);
    expect(lines[1]).toMatch(/^Sending 1 notification\(s\) to http:\/\/127\.0\.0\.1:\d+\/webhooks\/collection$/);
    const settlementId = /^#1 (\S+) 0123456789 NGN 1500\.00 → HTTP 200 00 success/.exec(lines[2]!)?.[1];
    expect(settlementId).toBeDefined();
    await confirmationOf(app, settlementId, 'NOT_AT_BANK', 15_000);
  });

  it('says nothing of the kind against the in-process sandbox bank, which makes each transfer itself', async () => {
    const app = await startApp();
    const { code, lines } = await simulate(['--url', app.baseUrl]);
    expect(code).toBe(0);
    expect(lines.some((line) => POSTED_STRAIGHT.test(line))).toBe(false);
    expect(lines[0]).toContain('through the sandbox bank');
  });

  it('--bank-console makes the transfers through a standalone sandbox bank (the live-mode rehearsal), which then confirms them', async () => {
    const sandbox = await startSandbox({
      partner: { clientId: PAIR.WEBHOOK_CLIENT_ID, clientSecret: new Secret(PAIR.WEBHOOK_CLIENT_SECRET) },
    });
    const origin = new URL(sandbox.urls.base).origin;
    // Every area on the sandbox's own paths (startLiveApp), the collection service too.
    const app = await startLiveApp(origin, {
      COLLECTION_CONFIRMATION: 'on',
      BANK_COLLECTION_URL: `${origin}${SANDBOX_PREFIXES.collection}`,
    });
    sandbox.collection.deliverTo(`${app.baseUrl}/webhooks/collection`);
    const { code, lines } = await simulate(['--url', app.baseUrl, '--bank-console', sandbox.collection.consoleUrl]);
    expect(code).toBe(0);
    expect(lines.some((line) => POSTED_STRAIGHT.test(line))).toBe(false);
    expect(lines[0]).toContain('through the sandbox bank');
    const settlementId = /^#1 (\S+) 0123456789 NGN 1500\.00 → HTTP 200 00 success/.exec(lines[1]!)?.[1];
    await confirmationOf(app, settlementId, 'CONFIRMED');
  });
});
