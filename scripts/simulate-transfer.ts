// `npm run simulate:transfer -- [--url http://localhost:4001] [--account 0123456789] [--amount 1500.00]
//   [--count N] [--duplicate] [--invalid] [--conflict]`: sends signed collection notifications to a
// running subgraph the way the bank's collection service does (op 14), and prints each reply.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DateTime } from 'luxon';
import { request } from 'undici';
import { collectionHeaders, collectionNotification } from '../scripts/collection-notifier.ts';

const USAGE = `usage: npm run simulate:transfer -- [--url http://localhost:4001] [--account 0123456789]
       [--amount 1500.00] [--count 1] [--duplicate] [--invalid] [--conflict] [--narration text]
--duplicate: each sent twice (00, then 01).
--invalid: each with its account cut to 9 digits, which the subgraph refuses (02) and keeps in its quarantine.
--conflict: each sent again with another amount (a 9 put before it): 00, then 01, kept in the quarantine as a CONFLICT.
Signs with WEBHOOK_CLIENT_ID / WEBHOOK_CLIENT_SECRET (from the environment or .env; the sandbox's by default).`;

function fail(message: string): never {
  console.error(`simulate:transfer: ${message}\n${USAGE}`);
  process.exit(2);
}

if (existsSync('.env')) process.loadEnvFile('.env');
const options = {
  url: { type: 'string', default: `http://localhost:${process.env.PORT || 4001}` },
  account: { type: 'string', default: '0123456789' },
  amount: { type: 'string', default: '1500.00' },
  count: { type: 'string', default: '1' },
  duplicate: { type: 'boolean', default: false },
  invalid: { type: 'boolean', default: false },
  conflict: { type: 'boolean', default: false },
  narration: { type: 'string', default: 'Payment for order' },
  help: { type: 'boolean', default: false },
} as const;

function readArgs() {
  try {
    return parseArgs({ options }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
}
const values = readArgs();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!/^\d{10}$/.test(values.account)) fail(`--account must be 10 digits, got "${values.account}"`);
if (!/^\d+(\.\d+)?$/.test(values.amount)) fail(`--amount must be a plain decimal such as 1500.00, got "${values.amount}"`);
const count = Number(values.count);
if (!Number.isSafeInteger(count) || count < 1) fail(`--count must be a whole number of at least 1, got "${values.count}"`);
if (values.invalid && values.conflict) fail('--invalid and --conflict do not go together: an invalid notification is never stored, so nothing can conflict with it');
let target: URL;
try {
  target = new URL(values.url);
} catch {
  fail(`--url must be an absolute URL, got "${values.url}"`);
}
// A bare server URL means the subgraph's webhook route.
if (target.pathname === '/' || target.pathname === '') target.pathname = '/webhooks/collection';

const headers = collectionHeaders(process.env.WEBHOOK_CLIENT_ID || undefined, process.env.WEBHOOK_CLIENT_SECRET || undefined);

/** A notification shaped like the bank's, with a fresh settlementId and sessionId. */
function notification(sequence: number) {
  const stamp = DateTime.now().setZone(process.env.BANK_TIMEZONE || 'Africa/Lagos');
  return collectionNotification({
    settlementId: `SIM${stamp.toFormat('yyyyMMddHHmmss')}${randomUUID().slice(0, 8)}`,
    sessionId: `0000${stamp.toFormat('yyMMddHHmmss')}${randomBytes(6).toString('hex')}`,
    // Nine digits: refused for its content, as the bank's would be with a mistyped account.
    accountNumber: values.invalid ? values.account.slice(0, 9) : values.account,
    transactionAmount: values.amount,
    tranRemarks: count > 1 ? `${values.narration} #${sequence}` : values.narration,
    tranDateTime: stamp.toFormat('yyyy-MM-dd HH:mm:ss'),
  });
}

async function send(body: string, label: string): Promise<boolean> {
  const started = performance.now();
  try {
    const response = await request(target, { method: 'POST', headers, body, headersTimeout: 15_000, bodyTimeout: 15_000 });
    const text = await response.body.text();
    const ms = (performance.now() - started).toFixed(1);
    let reply: { responseCode?: string; responseMessage?: string } = {};
    try {
      reply = JSON.parse(text);
    } catch {
      // Printed raw below.
    }
    const summary = reply.responseCode ? `${reply.responseCode} ${reply.responseMessage}` : text.slice(0, 200);
    console.log(`${label} → HTTP ${response.statusCode} ${summary} (${ms} ms)`);
    return response.statusCode === 200;
  } catch (error) {
    console.log(`${label} → failed: ${(error as Error).message}`);
    return false;
  }
}

const how = [values.invalid && ', each refused for its 9-digit account,', values.duplicate && ', each twice,', values.conflict && ', each again with another amount,']
  .filter(Boolean)
  .join('');
console.log(`Sending ${count} notification(s)${how} to ${target.href}`);
let ok = true;
for (let i = 1; i <= count; i += 1) {
  const body = notification(i);
  const label = `#${i} ${body.settlementId} ${body.accountNumber} NGN ${body.transactionAmount}`;
  ok = (await send(JSON.stringify(body), label)) && ok;
  if (values.duplicate) ok = (await send(JSON.stringify(body), `${label} (again)`)) && ok;
  if (values.conflict) {
    const other = { ...body, transactionAmount: `9${body.transactionAmount}`, settledAmount: `9${body.settledAmount}` };
    ok = (await send(JSON.stringify(other), `${label} (again, as NGN ${other.transactionAmount})`)) && ok;
  }
}
process.exit(ok ? 0 : 1);
