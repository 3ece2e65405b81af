/**
 * Confirmation against the in-process sandbox bank, as a newcomer meets it: `npm run
 * simulate:transfer` has the sandbox bank make each transfer, so it is confirmed like a real one;
 * a forged or tampered delivery is found out.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApp } from './helpers/app.ts';
import { confirmationOf, idsOf, subscribe } from './helpers/confirming.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'simulate-transfer.ts');
const run = promisify(execFile);

/** Runs `npm run simulate:transfer -- <args>` against `baseUrl`; the settlementIds it printed, in order. */
async function simulate(baseUrl: string, ...args: string[]): Promise<string[]> {
  const { stdout } = await run(process.execPath, [SCRIPT, '--url', baseUrl, ...args], { env: { PATH: process.env.PATH } });
  return [...stdout.matchAll(/^#\d+ (\S+) /gm)].map((match) => match[1]!);
}

describe('confirmation against the sandbox bank', () => {
  it('confirms simulated transfers, 99999999999999.99 exactly, finds forged and tampered ones out, and streams only the confirmed', async () => {
    const app = await startApp();
    const confirmed = await subscribe(app, { confirmed: true }, 1);
    const [exact] = await simulate(app.baseUrl, '--amount', '99999999999999.99');
    const [forged] = await simulate(app.baseUrl, '--forged');
    const [tampered] = await simulate(app.baseUrl, '--tampered', '--amount', '250.00');
    const [last] = await simulate(app.baseUrl);

    expect(await confirmationOf(app, exact, 'CONFIRMED')).toMatchObject({ source: 'WEBHOOK', differences: [], acknowledgedByBank: true });
    expect(await confirmationOf(app, forged, 'NOT_AT_BANK')).toMatchObject({ differences: [], acknowledgedByBank: null });
    expect(await confirmationOf(app, tampered, 'MISMATCHED')).toMatchObject({ differences: ['transactionAmount', 'settledAmount'] });
    await confirmationOf(app, last, 'CONFIRMED');
    await confirmed.atLeast(2);
    expect(idsOf(confirmed)).toEqual([exact, last]);
  });
});
