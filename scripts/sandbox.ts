/**
 * `npm run sandbox -- [--port 4010] [--host 127.0.0.1] [--webhook http://127.0.0.1:4001/webhooks/collection]
 * [--verbose]`: runs the bank sandbox on its own and prints the environment that points a subgraph at
 * it in live mode. With `--webhook`, its collection service delivers the console's transfers there,
 * signed with WEBHOOK_CLIENT_ID / WEBHOOK_CLIENT_SECRET (the environment's or .env's; the sandbox's
 * by default). Stops on SIGINT/SIGTERM.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLogger } from '../src/logger.ts';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { startBankSandbox } from '../src/sandbox/index.ts';
import { Secret } from '../src/secret.ts';

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function readArgs() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        webhook: { type: 'string' },
        verbose: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
}

if (existsSync('.env')) process.loadEnvFile('.env');
const values = readArgs();
const port = /^\d+$/.test(values.port) ? Number(values.port) : Number.NaN;
if (!Number.isInteger(port) || port > 65_535) fail(`--port must be a whole number from 0 to 65535, got "${values.port}"`);
if (values.webhook !== undefined && !/^https?:\/\/[^/]/.test(values.webhook))
  fail(`--webhook must be an http(s) URL, got "${values.webhook}"`);

const sandbox = await startBankSandbox({
  host: values.host,
  port,
  // Debug lines carry method, path and status only, never a credential.
  logger: values.verbose ? createLogger('debug') : undefined,
  // What the bank signs its deliveries with, and checks ops 15-17 against: the subgraph's webhook pair.
  partner: {
    clientId: process.env.WEBHOOK_CLIENT_ID || sandboxCredentials.webhookClientId,
    clientSecret: new Secret(process.env.WEBHOOK_CLIENT_SECRET || sandboxCredentials.webhookClientSecret),
  },
  timezone: process.env.BANK_TIMEZONE || undefined,
});
if (values.webhook !== undefined) sandbox.collection.deliverTo(values.webhook);

// Lines to paste into a shell or a .env file; the credentials are the defaults in
// src/sandbox/credentials.ts and are not printed.
console.log(
  [
    '# Bank sandbox is up. Point the subgraph at it with:',
    'UPSTREAM_MODE=live',
    `BANK_BASE_URL=${sandbox.urls.base}`,
    `BANK_GATEWAY_URL=${sandbox.urls.gateway}`,
    `BANK_BILLING_URL=${sandbox.urls.billing}`,
    `BANK_POSTING_URL=${sandbox.urls.posting}`,
    `BANK_WALLET_URL=${sandbox.urls.wallet}`,
    `BANK_COLLECTION_URL=${sandbox.urls.collection}`,
    '# and the sandbox credentials from src/sandbox/credentials.ts (BANK_API_TOKEN, BANK_USERNAME, ...).',
    `# The bank's console makes transfers: POST ${sandbox.collection.consoleUrl}/transfers {"accountNumber":"0123456789","amount":"1500.00"}`,
    values.webhook === undefined
      ? "# It delivers nowhere until started with --webhook <the subgraph's webhook URL>."
      : `# It delivers them to ${values.webhook}.`,
    '# Ctrl-C stops the sandbox.',
  ].join('\n'),
);

let closing = false;
const stop = (signal: NodeJS.Signals): void => {
  if (closing) return;
  closing = true;
  console.error(`# ${signal}: closing the bank sandbox`);
  sandbox.close().then(
    () => {
      process.exitCode = 0;
    },
    (error: unknown) => {
      console.error('# the bank sandbox did not close cleanly:', error);
      process.exitCode = 1;
    },
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
