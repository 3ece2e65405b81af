// `npm run watch -- [--url http://localhost:4001] [--account 0123456789] [--confirmed] [--after <cursor>]
//   [--token <JWT>] [--json]`: incoming transfers as they arrive, one line each, as `stripe listen`
// prints its events. A graphql-ws client (the graphql-transport-ws protocol) of `incomingTransfer`:
// when the connection drops it says so, reconnects with backoff and resumes after the last cursor it
// printed, so nothing is missed or printed twice. Events go to stdout, what happens to the connection
// to stderr. Exits 0 on Ctrl-C, 1 when the subgraph refuses the subscription, 2 on a usage error.
import { existsSync } from 'node:fs';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { readCommandLine } from './command-line.ts';

const USAGE = `usage: npm run watch -- [--url http://localhost:4001] [--account 0123456789] [--confirmed]
       [--after <cursor>] [--token <JWT>] [--json]
--account: only transfers to this account. --confirmed: only transfers the bank has confirmed, as it
confirms them (the stream to give value on). --after: first replay what arrived after this cursor (a
cursor the same stream printed). --token: sent as connectionParams.Authorization ("Bearer <JWT>"),
needed when the subgraph checks tokens (scope collections:read, or collections:read:all).
--json: each transfer as one JSON line. Ctrl-C stops.`;

function fail(message: string): never {
  console.error(`watch: ${message}\n${USAGE}`);
  process.exit(2);
}

if (existsSync('.env')) process.loadEnvFile('.env');
const options = {
  url: { type: 'string', default: `http://localhost:${process.env.PORT || 4001}` },
  account: { type: 'string' },
  confirmed: { type: 'boolean', default: false },
  after: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

const values = readCommandLine(options, USAGE, fail);
if (values.account !== undefined && !/^\d{10}$/.test(values.account)) fail(`--account must be 10 digits, got "${values.account}"`);
if (values.after === '') fail('--after needs a cursor, as a transfer line printed it');
const endpoint = webSocketUrl(values.url);

/** The graphql-ws endpoint of the subgraph at `url`: ws(s)://, on /graphql when no path is given. */
function webSocketUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`--url must be an absolute URL, got "${url}"`);
  }
  const schemes: Record<string, string> = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' };
  const scheme = schemes[parsed.protocol];
  if (scheme === undefined) fail(`--url must be http(s):// or ws(s)://, got "${url}"`);
  parsed.protocol = scheme;
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/graphql';
  return parsed.href;
}

const SUBSCRIPTION = `subscription Watch($accountNumber: String, $after: String, $confirmed: Boolean) {
  incomingTransfer(accountNumber: $accountNumber, after: $after, confirmed: $confirmed) {
    settlementId sessionId accountNumber transactionAmount settledAmount feeAmount vatAmount currency
    narration sourceAccountName sourceBankName transactionTime receivedAt cursor source
    confirmation { status checkedAt differences }
  }
}`;

interface Transfer {
  settlementId: string;
  accountNumber: string;
  transactionAmount: string;
  currency: string | null;
  transactionTime: string | null;
  receivedAt: string;
  cursor: string;
  confirmation: { status: string };
}

/** One line a person reads: when, to which account, how much, which transfer, its status, its cursor. */
function transferLine(transfer: Transfer): string {
  const amount = `${transfer.currency ?? 'NGN'} ${groupThousands(transfer.transactionAmount)}`;
  const time = transfer.transactionTime ?? transfer.receivedAt;
  return [
    time,
    transfer.accountNumber,
    amount.padStart(18),
    transfer.settlementId,
    transfer.confirmation.status.padEnd(11),
    transfer.cursor,
  ].join('  ');
}

/** `1500000.00` as `1,500,000.00`: the decimal text regrouped, never read as a number. */
function groupThousands(amount: string): string {
  const [whole = '', fraction] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** What the subgraph refused, as one line naming what is missing; undefined when the result holds no error. */
function refusal(result: FormattedExecutionResult<unknown, unknown>): string | undefined {
  const [error] = result.errors ?? [];
  if (error === undefined) return undefined;
  const code = typeof error.extensions?.code === 'string' ? error.extensions.code : 'an error';
  switch (code) {
    case 'UNAUTHENTICATED':
      return values.token === undefined
        ? 'refused (UNAUTHENTICATED): this subgraph checks tokens and none was given: pass --token <JWT> with scope collections:read'
        : `refused (UNAUTHENTICATED): the token given with --token was not accepted: ${error.message}`;
    case 'UNAUTHORIZED_FIELD_OR_TYPE':
      return 'refused (UNAUTHORIZED_FIELD_OR_TYPE): the token lacks scope collections:read (or collections:read:all), which watching needs';
    case 'FORBIDDEN':
      return `refused (FORBIDDEN): account ${values.account} is not among the token's accounts: use a token naming it, or leave --account out`;
    default:
      return `refused (${code}): ${error.message}`;
  }
}

/** Close codes after which a reconnect cannot help: the same request would be refused again. */
const FATAL_CLOSES: Record<number, string> = {
  1009: 'a message over the size limit',
  4400: 'a protocol error',
  4401: 'the token has ended (expired, or its key withdrawn): mint a fresh token and resume with --after',
  4403: 'forbidden',
  4406: 'the subprotocol graphql-transport-ws was refused',
};

let lastCursor = values.after;
let client: Client | undefined;
const say = (line: string) => console.error(line);

/** How one connection ended: a refusal to report (exit 1), or a drop to reconnect after. */
type Ending = { refused: string } | { dropped: string };

let everConnected = false;

/** Subscribes once, printing every transfer, until the connection drops or the subgraph refuses; whether it connected. */
async function watchOnce(): Promise<{ ending: Ending; connected: boolean }> {
  const ended = Promise.withResolvers<Ending>();
  let connected = false;
  let pongTimer: NodeJS.Timeout | undefined;
  let socket: WebSocket | undefined;
  client = createClient({
    url: endpoint,
    webSocketImpl: WebSocket,
    connectionParams: values.token === undefined ? {} : { Authorization: `Bearer ${values.token}` },
    lazy: true,
    // Reconnecting is ours: each attempt resumes after the last cursor printed, which graphql-ws's own
    // retry (the first subscription's variables again) would not.
    retryAttempts: 0,
    // A connection that stops answering is noticed within 15 s, and closed to be made again.
    keepAlive: 10_000,
    on: {
      connected: (opened) => {
        socket = opened as WebSocket;
        connected = true;
        say(everConnected ? reconnectedLine() : readyLine());
        everConnected = true;
      },
      ping: (received) => {
        if (!received) pongTimer = setTimeout(() => socket?.readyState === WebSocket.OPEN && socket.close(4408, 'no pong'), 5_000);
      },
      pong: (received) => received && clearTimeout(pongTimer),
      closed: () => clearTimeout(pongTimer),
    },
  });
  const variables = { accountNumber: values.account, after: lastCursor, confirmed: values.confirmed };
  client.subscribe<{ incomingTransfer: Transfer }>(
    { query: SUBSCRIPTION, variables },
    {
      next: (result) => {
        const refused = refusal(result);
        if (refused !== undefined) return ended.resolve({ refused });
        const transfer = result.data!.incomingTransfer;
        console.log(values.json ? JSON.stringify(transfer) : transferLine(transfer));
        lastCursor = transfer.cursor;
      },
      error: (error) => ended.resolve(endingOf(error)),
      complete: () => ended.resolve({ dropped: 'the subgraph ended the subscription' }),
    },
  );
  const ending = await ended.promise;
  await client.dispose();
  return { ending, connected };
}

/** What an error of graphql-ws means here: a close (fatal or not), validation errors, or a socket that never opened. */
function endingOf(error: unknown): Ending {
  if (Array.isArray(error)) return { refused: `refused: ${error.map((e: { message: string }) => e.message).join('; ')}` };
  const { code, reason, message } = (error ?? {}) as { code?: number; reason?: string; message?: string };
  if (typeof code === 'number') {
    const said = `${code}${reason ? ` ${reason}` : ''}`;
    if (code in FATAL_CLOSES) {
      const resume = code === 4401 && lastCursor !== undefined ? ` ${lastCursor}` : code === 4401 ? ' <the last cursor>' : '';
      return { refused: `closed by the subgraph (${said}): ${FATAL_CLOSES[code]}${resume}` };
    }
    return { dropped: said };
  }
  return { dropped: message ?? String(error) };
}

function reconnectedLine(): string {
  return `Reconnected: ${lastCursor === undefined ? 'live, with nothing printed yet to resume after' : `resuming after ${lastCursor}`}`;
}

function readyLine(): string {
  const what = [
    values.account && `account ${values.account}`,
    values.confirmed && 'confirmed only',
    lastCursor && `after ${lastCursor}`,
  ].filter(Boolean);
  return `Ready: watching incomingTransfer at ${endpoint}${what.length > 0 ? ` (${what.join(', ')})` : ''}. Ctrl-C to stop.`;
}

/** 0.5 s doubling to 8 s, give or take a fifth, so many watchers do not come back at once. */
function backoffMs(failures: number): number {
  return Math.min(500 * 2 ** failures, 8_000) * (0.8 + Math.random() * 0.4);
}

async function stop(): Promise<never> {
  await client?.dispose();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// `npm run watch | head`: the reader gone is a stop, not a crash.
process.stdout.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' ? void stop() : process.exit(1)));

let failures = 0;
for (;;) {
  const { ending, connected } = await watchOnce();
  if ('refused' in ending) {
    console.error(`watch: ${ending.refused}`);
    process.exit(1);
  }
  failures = connected ? 0 : failures + 1;
  const wait = backoffMs(failures);
  const retry = `${connected ? 'reconnecting' : 'retrying'} in ${(wait / 1000).toFixed(1)} s`;
  say(connected ? `Connection lost (${ending.dropped}): ${retry}` : `Cannot reach ${endpoint} (${ending.dropped}): ${retry}`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}
