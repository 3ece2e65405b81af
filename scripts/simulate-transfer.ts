// `npm run simulate:transfer -- [--url http://localhost:4001] [--account 0123456789] [--amount 1500.00]
//   [--count N] [--duplicate] [--invalid] [--conflict] [--lost | --forged | --tampered] [--bank-console <url>]`:
// incoming transfers the way the bank's collection service notifies them (op 14), each reply printed.
// Against the in-process sandbox the sandbox bank makes each transfer and delivers it, so the bank
// holds it for confirmation as the real one would; so does a standalone sandbox bank named with
// --bank-console. Against any other subgraph the script posts signed notifications itself, and says
// first that the bank will hold none of them.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { DateTime } from 'luxon';
import { request } from 'undici';
import { collectionHeaders, collectionNotification } from '../scripts/collection-notifier.ts';
import { readCommandLine } from './command-line.ts';

const USAGE = `usage: npm run simulate:transfer -- [--url http://localhost:4001] [--account 0123456789]
       [--amount 1500.00] [--count 1] [--narration text] [--duplicate] [--invalid] [--conflict]
       [--lost | --forged | --tampered] [--bank-console <url>]
--duplicate: each delivered twice (00, then 01).
--invalid: each with its account cut to 9 digits, which the subgraph refuses (02) and keeps in its quarantine.
--conflict: each sent again with another amount (a 9 put before it): 00, then 01, kept in the quarantine as a CONFLICT.
--lost: the bank records each transfer and never delivers it; its ids are printed, to reconcile (sandbox only).
--forged: each a signed delivery posted straight to the webhook, that the bank never made.
--tampered: the bank records each transfer, and a delivery with another amount is posted straight to the webhook,
  as a man in the middle would (sandbox only).
Against the in-process sandbox the sandbox bank makes and delivers each transfer; what no bank would send
(--invalid, --forged, the second delivery of --conflict and --tampered) is posted straight to the webhook.
--bank-console: the console of a sandbox bank started with npm run sandbox (it prints the URL), to make
transfers through, for a subgraph in live mode against it. Without either, each notification is posted
straight to the webhook: the bank holds none of them, so confirmation finds them NOT_AT_BANK.
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
  lost: { type: 'boolean', default: false },
  forged: { type: 'boolean', default: false },
  tampered: { type: 'boolean', default: false },
  narration: { type: 'string', default: 'Payment for order' },
  'bank-console': { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

const values = readCommandLine(options, USAGE, fail);
if (!/^\d{10}$/.test(values.account)) fail(`--account must be 10 digits, got "${values.account}"`);
if (!/^\d+(\.\d+)?$/.test(values.amount)) fail(`--amount must be a plain decimal such as 1500.00, got "${values.amount}"`);
const count = Number(values.count);
if (!Number.isSafeInteger(count) || count < 1) fail(`--count must be a whole number of at least 1, got "${values.count}"`);
refuseCombinations();
let target: URL;
try {
  target = new URL(values.url);
} catch {
  fail(`--url must be an absolute URL, got "${values.url}"`);
}
if (values['bank-console'] !== undefined && !URL.canParse(values['bank-console']))
  fail(`--bank-console must be an absolute URL, as npm run sandbox prints it, got "${values['bank-console']}"`);
// A bare server URL means the subgraph's webhook route.
if (target.pathname === '/' || target.pathname === '') target.pathname = '/webhooks/collection';

/** Flags that cannot go together, each refusal naming both and why. */
function refuseCombinations(): void {
  const kinds = (['lost', 'forged', 'tampered', 'invalid'] as const).filter((flag) => values[flag]);
  if (kinds.length > 1) fail(`--${kinds[0]} and --${kinds[1]} do not go together: each says differently what becomes of a transfer`);
  if (values.invalid && values.conflict)
    fail('--invalid and --conflict do not go together: an invalid notification is never stored, so nothing can conflict with it');
  if (values.lost && values.duplicate)
    fail('--lost and --duplicate do not go together: a lost transfer is never delivered, so not twice either');
  if (values.lost && values.conflict)
    fail('--lost and --conflict do not go together: a lost transfer is never delivered, so nothing can conflict with it');
  if (values.tampered && values.conflict) fail('--tampered and --conflict do not go together: --tampered already sends another amount');
}

const headers = collectionHeaders(process.env.WEBHOOK_CLIENT_ID || undefined, process.env.WEBHOOK_CLIENT_SECRET || undefined);

type Notification = Record<string, string>;
interface Reply {
  status: number;
  reply: unknown;
}

/** A notification shaped like the bank's, with a fresh settlementId and sessionId, for a straight post. */
function notification(sequence: number): Notification {
  const stamp = DateTime.now().setZone(process.env.BANK_TIMEZONE || 'Africa/Lagos');
  return collectionNotification({
    settlementId: `SIM${stamp.toFormat('yyyyMMddHHmmss')}${randomUUID().slice(0, 8)}`,
    sessionId: `0000${stamp.toFormat('yyMMddHHmmss')}${randomBytes(6).toString('hex')}`,
    // Nine digits: refused for its content, as the bank's would be with a mistyped account.
    accountNumber: values.invalid ? values.account.slice(0, 9) : values.account,
    transactionAmount: values.amount,
    tranRemarks: narration(sequence),
    tranDateTime: stamp.toFormat('yyyy-MM-dd HH:mm:ss'),
  });
}

function narration(sequence: number): string {
  return count > 1 ? `${values.narration} #${sequence}` : values.narration;
}

async function exchange(url: string | URL, method: 'GET' | 'POST', body?: string, sent: Record<string, string> = {}): Promise<Reply> {
  const response = await request(url, { method, headers: sent, body, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const text = await response.body.text();
  try {
    return { status: response.statusCode, reply: JSON.parse(text) as unknown };
  } catch {
    return { status: response.statusCode, reply: text };
  }
}

/** Prints one line for a webhook's answer; true when it was HTTP 200. */
function report(label: string, started: number, answer: Reply | { error: string }): boolean {
  const ms = (performance.now() - started).toFixed(1);
  if ('error' in answer) {
    console.log(`${label} → failed: ${answer.error} (${ms} ms)`);
    return false;
  }
  const { responseCode, responseMessage } = (typeof answer.reply === 'object' && answer.reply !== null ? answer.reply : {}) as Notification;
  const summary = responseCode ? `${responseCode} ${responseMessage}` : String(answer.reply).slice(0, 200);
  console.log(`${label} → HTTP ${answer.status} ${summary} (${ms} ms)`);
  return answer.status === 200;
}

/** Posts `body` straight to the webhook, signed as the bank signs, and prints the reply. */
async function postStraight(body: Notification, label: string): Promise<boolean> {
  const started = performance.now();
  try {
    return report(label, started, await exchange(target, 'POST', JSON.stringify(body), headers));
  } catch (error) {
    return report(label, started, { error: (error as Error).message });
  }
}

/** The in-process sandbox bank's console, when the subgraph runs on it; undefined for any other bank. */
async function sandboxConsole(): Promise<string | undefined> {
  const found = await exchange(new URL('/sandbox/bank', target), 'GET');
  if (found.status !== 200) return undefined;
  const consoleUrl = (found.reply as { collectionConsole?: unknown }).collectionConsole;
  if (typeof consoleUrl !== 'string') throw new Error("/sandbox/bank did not name the sandbox bank's console");
  return consoleUrl;
}

interface BankTransfer {
  settlementId: string;
  sessionId: string;
  notification: Notification;
  delivered: boolean;
  webhook?: Reply;
  error?: string;
}

/** Has the sandbox bank make one transfer (delivered, or recorded and never delivered) and prints what became of it. */
async function bankTransfer(consoleUrl: string, sequence: number, lost: boolean): Promise<{ ok: boolean; transfer?: BankTransfer }> {
  const order = { accountNumber: values.account, amount: values.amount, narration: narration(sequence), lost };
  const started = performance.now();
  const made = await exchange(`${consoleUrl}/transfers`, 'POST', JSON.stringify(order), { 'content-type': 'application/json' });
  if (made.status !== 201) {
    return { ok: report(`#${sequence} the sandbox bank refused the transfer`, started, { error: JSON.stringify(made.reply) }) };
  }
  const transfer = made.reply as BankTransfer;
  const label = `#${sequence} ${transfer.settlementId} ${values.account} NGN ${values.amount}`;
  if (lost) {
    // A transfer to tamper with is held back too: its one line is the tampered delivery's.
    if (values.lost)
      console.log(
        `${label} → lost: the bank holds it and never delivered it (settlementId ${transfer.settlementId}, sessionId ${transfer.sessionId})`,
      );
    return { ok: true, transfer };
  }
  return { ok: report(label, started, transfer.webhook ?? { error: transfer.error ?? 'not delivered' }), transfer };
}

/** Has the sandbox bank deliver a transfer it made once more, and prints the reply. */
async function deliverAgain(consoleUrl: string, transfer: BankTransfer, label: string): Promise<boolean> {
  const started = performance.now();
  const again = await exchange(`${consoleUrl}/transfers/${encodeURIComponent(transfer.settlementId)}/deliveries`, 'POST', '{}', {
    'content-type': 'application/json',
  });
  const outcome = again.reply as BankTransfer;
  return report(label, started, outcome.webhook ?? { error: outcome.error ?? `HTTP ${again.status}` });
}

/** The same notification with another amount, as a conflicting duplicate or a man in the middle would send it. */
function withAnotherAmount(body: Notification): Notification {
  return { ...body, transactionAmount: `9${body.transactionAmount}`, settledAmount: `9${body.settledAmount}` };
}

/** One transfer through the sandbox bank; what no bank would send is posted straight. */
async function throughSandbox(consoleUrl: string, sequence: number): Promise<boolean> {
  if (values.invalid || values.forged) return straight(sequence);
  const { ok, transfer } = await bankTransfer(consoleUrl, sequence, values.lost || values.tampered);
  if (transfer === undefined) return false;
  const label = `#${sequence} ${transfer.settlementId} ${values.account} NGN ${values.amount}`;
  let sent = ok;
  if (values.tampered) {
    const tampered = withAnotherAmount(transfer.notification);
    const tamperedLabel = `${label} (tampered: posted as NGN ${tampered.transactionAmount}, the bank holds NGN ${values.amount})`;
    sent = (await postStraight(tampered, tamperedLabel)) && sent;
    if (values.duplicate) sent = (await postStraight(tampered, `${tamperedLabel} (again)`)) && sent;
    return sent;
  }
  if (values.duplicate && !values.lost) sent = (await deliverAgain(consoleUrl, transfer, `${label} (again)`)) && sent;
  if (values.conflict) {
    const other = withAnotherAmount(transfer.notification);
    sent = (await postStraight(other, `${label} (again, as NGN ${other.transactionAmount})`)) && sent;
  }
  return sent;
}

/** One notification posted straight to the webhook, as before there was a bank to go through. */
async function straight(sequence: number): Promise<boolean> {
  const body = notification(sequence);
  const forged = values.forged ? ' (forged: the bank never made it)' : '';
  const label = `#${sequence} ${body.settlementId} ${body.accountNumber} NGN ${body.transactionAmount}${forged}`;
  let sent = await postStraight(body, label);
  if (values.duplicate) sent = (await postStraight(body, `${label} (again)`)) && sent;
  if (values.conflict) {
    const other = withAnotherAmount(body);
    sent = (await postStraight(other, `${label} (again, as NGN ${other.transactionAmount})`)) && sent;
  }
  return sent;
}

let bankConsole: string | undefined;
try {
  bankConsole = values['bank-console'] ?? (await sandboxConsole());
} catch (error) {
  console.log(`${target.origin} → failed: ${(error as Error).message}`);
  process.exit(1);
}
if (bankConsole === undefined && (values.lost || values.tampered)) {
  fail(
    `--${values.lost ? 'lost' : 'tampered'} needs the in-process sandbox bank (npm start with no UPSTREAM_MODE) or --bank-console: only a sandbox bank can be made to record a transfer; ${target.origin} is not running on one`,
  );
}
// No sandbox bank answers for this subgraph (it is in live mode, or under the production rules):
// what the bank would send is posted straight to the webhook, and that bank never made any of it.
if (bankConsole === undefined && !values.forged && !values.invalid) {
  console.log(
    `${target.origin} runs no in-process sandbox bank (live mode, or the production rules): each notification is posted ` +
      'straight to its webhook, so the bank holds none of them and confirmation will find them NOT_AT_BANK ' +
      '(--bank-console <url> makes them through a sandbox bank started with npm run sandbox).',
  );
}

const how = [
  values.invalid && ', each refused for its 9-digit account,',
  values.duplicate && ', each twice,',
  values.conflict && ', each again with another amount,',
  values.forged && ', each forged,',
  values.tampered && ', each tampered with,',
]
  .filter(Boolean)
  .join('');
// A forged or invalid notification is one no bank sends: it is posted straight to the webhook.
const route = bankConsole === undefined || values.forged || values.invalid ? '' : ' through the sandbox bank';
console.log(
  values.lost
    ? `Making ${count} transfer(s) the sandbox bank never delivers`
    : `Sending ${count} notification(s)${how} to ${target.href}${route}`,
);
let ok = true;
for (let i = 1; i <= count; i += 1) {
  try {
    ok = (bankConsole === undefined ? await straight(i) : await throughSandbox(bankConsole, i)) && ok;
  } catch (error) {
    console.log(`#${i} → failed: ${(error as Error).message}`);
    ok = false;
  }
}
process.exit(ok ? 0 : 1);
