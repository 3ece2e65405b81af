/**
 * `npm run sandbox -- [--port 4010] [--host 127.0.0.1] [--verbose]`: runs the bank sandbox on its own
 * and prints the environment that points a subgraph at it in live mode. Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { createLogger } from '../src/logger.ts';
import { startBankSandbox } from '../src/sandbox/index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    verbose: { type: 'boolean', default: false },
  },
});

const port = /^\d+$/.test(values.port) ? Number(values.port) : Number.NaN;
if (!Number.isInteger(port) || port > 65_535) {
  console.error(`--port must be a whole number from 0 to 65535, got "${values.port}"`);
  process.exit(2);
}

const sandbox = await startBankSandbox({
  host: values.host,
  port,
  // Debug lines carry method, path and status only, never a credential.
  logger: values.verbose ? createLogger('debug') : undefined,
});

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
    '# and the sandbox credentials from src/sandbox/credentials.ts (BANK_API_TOKEN, BANK_USERNAME, ...).',
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
