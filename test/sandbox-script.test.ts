import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../scripts/collection-notifier.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { startFakeBank } from './helpers/fake-bank.ts';
import { postJson } from './helpers/sandbox.ts';
import { Inbox } from './helpers/wait.ts';

const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'sandbox.ts');

/** Runs `npm run sandbox -- <args>` (the script itself, with the test's Node); its printed lines as they come. */
function runSandbox(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const lines = new Inbox<string>();
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => lines.push(line));
  return { child, lines, exited };
}

describe('npm run sandbox', () => {
  it("prints BANK_COLLECTION_URL and its console, and delivers the console's transfers to --webhook, signed with the webhook pair", async () => {
    const webhook = await startFakeBank((_request, reply) =>
      reply.json({ requestSuccessful: true, responseCode: '00', responseMessage: 'success' }),
    );
    const pair = { WEBHOOK_CLIENT_ID: 'partner-7', WEBHOOK_CLIENT_SECRET: 'partner-7-webhook-secret' };
    const { child, lines, exited } = runSandbox(['--port', '0', '--webhook', `${webhook.url}/webhooks/collection`], pair);
    const consoleLine = await lines.first((line) => line.includes('/console/collection/transfers'), 15_000);
    expect(lines.join('\n')).toMatch(/^BANK_COLLECTION_URL=http:\/\/127\.0\.0\.1:\d+\/collection$/m);
    expect(lines.join('\n')).not.toContain('partner-7-webhook-secret');
    const consoleUrl = /POST (\S+)\/transfers/.exec(consoleLine)![1]!;
    const made = await postJson(`${consoleUrl}/transfers`, { accountNumber: '0123456789', amount: '10.00' });
    expect(made.json).toMatchObject({ delivered: true, webhook: { reply: { responseCode: '00' } } });
    expect(webhook.received[0]!.url).toBe('/webhooks/collection');
    expect(webhook.received[0]!.headers).toMatchObject(collectionHeaders('partner-7', 'partner-7-webhook-secret'));
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  });

  it('refuses a --webhook that is not an http(s) URL', async () => {
    const { lines, exited } = runSandbox(['--port', '0', '--webhook', 'localhost:4001']);
    await lines.first((line) => line.includes('--webhook must be an http(s) URL, got "localhost:4001"'), 15_000);
    expect((await exited)[0]).toBe(2);
  });
});
