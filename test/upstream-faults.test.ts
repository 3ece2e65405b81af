import type { ExecutionResult } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import type { CollectionStore } from '../src/store/types.ts';
import { SANDBOX_PREFIXES } from '../src/sandbox/index.ts';
import { basicAuthorization } from '../src/upstream/http.ts';
import { startApp, type GraphQLResponse } from './helpers/app.ts';
import { bankUrlsOn } from './helpers/counting-bank.ts';
import { startFakeBank, unusedUrl, type FakeBankHandler } from './helpers/fake-bank.ts';
import { newNotification } from './helpers/notifications.ts';
import { openMemoryStore } from './helpers/stores.ts';
import { LOOPBACK_SOURCES, PRODUCTION_SANDBOX, productionHeaders, TEST_AUTH } from './helpers/production.ts';
import { withMethod } from './helpers/proxy.ts';

// Distinctive values, so a leak of any of them into a response is found by a plain search.
const CREDENTIALS = {
  BANK_API_TOKEN: 'fault-api-token-7f3a',
  BANK_USERNAME: 'fault-account-user',
  BANK_PASSWORD: 'fault-account-pass-91c2',
  BILLING_USERNAME: 'fault-billing-user',
  BILLING_PASSWORD: 'fault-billing-pass-4e8d',
  POSTING_USERNAME: 'fault-posting-user',
  POSTING_PASSWORD: 'fault-posting-pass-02b7',
  OAUTH_CLIENT_ID: 'fault-oauth-client',
  OAUTH_CLIENT_SECRET: 'fault-oauth-secret-5d1e',
  WEBHOOK_CLIENT_ID: 'fault-collection',
  WEBHOOK_CLIENT_SECRET: 'fault-webhook-secret-c6a9',
};

// What a bank or its proxy may put in a failure: an internal host and a stack. None may reach a client.
const INTERNAL_HOST = 'core-banking.internal';
const BANK_STACK = `Error: pool exhausted\n    at Pool.acquire (/srv/${INTERNAL_HOST}/db.js:42:7)\n    at async lookup (/srv/app.js:9:3)`;

/** Everything a response must never contain for an app whose bank is at `bankUrl`. */
function forbiddenIn(bankUrl: string): string[] {
  return [
    bankUrl,
    new URL(bankUrl).host,
    INTERNAL_HOST,
    ...Object.values(CREDENTIALS).filter((value) => /pass|secret|token/.test(value)),
    basicAuthorization(CREDENTIALS.BILLING_USERNAME, CREDENTIALS.BILLING_PASSWORD).slice('Basic '.length),
  ];
}

/** Fails naming which forbidden value (by position, never the value) or which stack frame leaked. */
function expectNothingLeaked(body: string, forbidden: string[]): void {
  const leaked = forbidden.map((value, index) => (body.includes(value) ? `forbidden[${index}]` : undefined)).filter(Boolean);
  expect(leaked, 'values that reached the response').toEqual([]);
  expect(body, 'a stack frame in the response').not.toMatch(/\bat \S+ \(|\bat .*:\d+:\d+|\.(ts|js):\d+/);
  expect(body.toLowerCase()).not.toContain('stacktrace');
}

/** The GraphQL response with its raw JSON text, for the leak checks. */
async function queryText(app: Awaited<ReturnType<typeof startApp>>, query: string) {
  const response: GraphQLResponse = await app.query(query);
  return { response, text: JSON.stringify(response) };
}

const OPERATIONS = [
  { area: 'account (header credentials)', query: '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }' },
  { area: 'billing (Basic credentials)', query: '{ billCategories { id name } }' },
  {
    area: 'posting (credentials in the body)',
    query: '{ postingAccount(accountNumber: "0123456789", beneficiaryBank: "000013") { accountName } }',
  },
];

// `transient` faults are retried (these are all reads), as far as the 300 ms budget allows.
const FAULTS: { name: string; handler: FakeBankHandler; code: string; transient?: boolean }[] = [
  {
    name: 'a 500',
    code: 'UPSTREAM_UNAVAILABLE',
    transient: true,
    handler: (_, reply) => reply.status(500).json({ error: 'Internal Server Error', trace: BANK_STACK }),
  },
  { name: 'an answer slower than BANK_TIMEOUT_MS', code: 'UPSTREAM_UNAVAILABLE', handler: () => undefined },
  { name: 'a connection reset', code: 'UPSTREAM_UNAVAILABLE', transient: true, handler: (_, reply) => reply.destroy() },
  {
    name: 'an HTML page',
    code: 'UPSTREAM_INVALID_RESPONSE',
    handler: (_, reply) => reply.status(200).text(`<html><body><h1>Gateway</h1><pre>${BANK_STACK}</pre></body></html>`, 'text/html'),
  },
  {
    name: 'a 401',
    code: 'UPSTREAM_UNAUTHORIZED',
    handler: (_, reply) => reply.status(401).json({ error: 'Unauthorized', path: `http://${INTERNAL_HOST}/auth` }),
  },
  {
    name: 'a 400',
    code: 'UPSTREAM_BAD_REQUEST',
    handler: (_, reply) => reply.status(400).json({ error: 'Bad Request', detail: BANK_STACK }),
  },
];

const MODES: { mode: string; env: Record<string, string>; headers: () => Promise<Record<string, string>> }[] = [
  // A live bank gets the production rules whatever NODE_ENV says: tokens are checked in both. The
  // caller's may read everything, so only the bank can fail.
  { mode: 'NODE_ENV unset', env: { ...TEST_AUTH }, headers: productionHeaders },
  { mode: 'production', env: { ...PRODUCTION_SANDBOX }, headers: productionHeaders },
];

describe.each(MODES)('bank failures as GraphQL errors ($mode)', ({ env, headers }) => {
  /** The app in live mode with every area at `baseUrl`, a short time budget, every credential set. */
  async function startLive(baseUrl: string) {
    return startApp(
      {
        ...env,
        ...CREDENTIALS,
        ...LOOPBACK_SOURCES,
        UPSTREAM_MODE: 'live',
        BANK_TIMEOUT_MS: '300',
        ...bankUrlsOn(baseUrl),
        COLLECTION_CONFIRMATION: 'off',
      },
      {},
      { headers: await headers() },
    );
  }

  describe.each(OPERATIONS)('$area', ({ query }) => {
    it.each(FAULTS)('maps $name to $code, leaking nothing', async ({ handler, code, transient }) => {
      const bank = await startFakeBank(handler);
      const app = await startLive(bank.url);
      const started = performance.now();
      const { response, text } = await queryText(app, query);
      expect(response.status).toBe(200);
      expect(response.errors).toHaveLength(1);
      expect(response.errors![0]!.extensions).toEqual({ code });
      // The call really reached the bank, carrying the credentials that must not come back; a
      // transient fault was tried again (up to 3 attempts), anything else only once.
      if (transient) expect(bank.received.length).toBeGreaterThanOrEqual(1);
      expect(bank.received.length).toBeLessThanOrEqual(transient ? 3 : 1);
      // A hang is cut at the configured budget (300 ms): at the 10 s default it would take at least
      // that long, so anything under it, however loaded the machine, is the budget at work.
      expect(performance.now() - started).toBeLessThan(10_000);
      expectNothingLeaked(text, forbiddenIn(bank.url));
    });

    it('maps a closed port to UPSTREAM_UNAVAILABLE, leaking nothing', async () => {
      const url = await unusedUrl();
      const app = await startLive(url);
      const { response, text } = await queryText(app, query);
      expect(response.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
      expectNothingLeaked(text, forbiddenIn(url));
    });
  });

  it.each(OPERATIONS.filter((op) => !op.area.startsWith('billing')))(
    'maps responseCode "51" from $area to UPSTREAM_REJECTED with the bank\'s code and message',
    async ({ query }) => {
      const bank = await startFakeBank((_, reply) => reply.status(200).json({ responseCode: '51', responseMessage: 'Insufficient funds' }));
      const app = await startLive(bank.url);
      const { response, text } = await queryText(app, query);
      expect(response.errors?.[0]?.extensions).toEqual({
        code: 'UPSTREAM_REJECTED',
        responseCode: '51',
        responseMessage: 'Insufficient funds',
      });
      expectNothingLeaked(text, forbiddenIn(bank.url));
    },
  );

  it("answers a resolver's unexpected Error with a bare INTERNAL_SERVER_ERROR, none of its message", async () => {
    const store = await realStore();
    const broken = withMethod(store, 'getMany', async () => {
      throw new Error('connect ECONNREFUSED postgres://app:hunter2-pw@db.internal:5432/collections');
    });
    const app = await startApp(env, { store: broken }, { headers: await headers() });
    const { response, text } = await queryText(app, '{ collectionNotification(settlementId: "STL-1") { settlementId } }');
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]!.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
    expect(response.errors![0]!.message).toBe('Internal server error.');
    for (const part of ['hunter2', 'db.internal', 'postgres', 'ECONNREFUSED']) expect(text).not.toContain(part);
    expectNothingLeaked(text, []);
  });

  it("answers a subscription's unexpected Error over WebSocket with a bare INTERNAL_SERVER_ERROR", async () => {
    // Two stored before the app starts, so resuming after the first needs a replay query, which fails.
    const store = await realStore();
    const [first] = [await store.insert(newNotification()), await store.insert(newNotification())];
    const broken = withMethod(store, 'listAfter', async () => {
      throw new Error('connect ECONNREFUSED postgres://app:hunter2-pw@db.internal:5432/collections');
    });
    const app = await startApp(env, { store: broken }, { headers: await headers() });
    const settlementId = first.status === 'inserted' ? first.notification.settlementId : '';
    const { data } = await app.query(`{ collectionNotification(settlementId: "${settlementId}") { cursor } }`);

    const failed = Promise.withResolvers<unknown>();
    app.wsClient().subscribe(
      {
        query: `subscription($after: String) { incomingTransfer(after: $after) { settlementId } }`,
        variables: { after: data!.collectionNotification.cursor },
      },
      {
        next: (result: ExecutionResult) => failed.resolve(result),
        error: (error) => failed.resolve(error),
        complete: () => failed.resolve('completed'),
      },
    );
    const outcome = await failed.promise;
    const text = JSON.stringify(outcome);
    for (const part of ['hunter2', 'db.internal', 'postgres', 'ECONNREFUSED']) expect(text).not.toContain(part);
    expect(outcome).toEqual([
      expect.objectContaining({ message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }),
    ]);
  });
});

describe("errors of the client's own subscription document over WebSocket", () => {
  it('keeps a validation error readable, with GRAPHQL_VALIDATION_FAILED', async () => {
    const app = await startApp();
    const failed = Promise.withResolvers<unknown>();
    app
      .wsClient()
      .subscribe(
        { query: 'subscription { incomingTransfer { noSuchField } }' },
        { next: failed.resolve, error: failed.resolve, complete: () => failed.resolve('completed') },
      );
    expect(await failed.promise).toEqual([
      expect.objectContaining({ message: expect.stringContaining('noSuchField'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
    ]);
  });
});

describe('the embedded sandbox refusing misconfigured credentials', () => {
  // What any URL of the embedded sandbox holds, whatever port it was given: its loopback address
  // and its areas' paths.
  const sandboxUrlParts = ['127.0.0.1', ...Object.values(SANDBOX_PREFIXES)];

  it('answers UPSTREAM_UNAUTHORIZED to an account lookup when BANK_PASSWORD is wrong', async () => {
    const app = await startApp({ BANK_PASSWORD: 'wrong-account-pass-3f1' });
    const { response, text } = await queryText(app, OPERATIONS[0]!.query);
    expect(response.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAUTHORIZED');
    expectNothingLeaked(text, ['wrong-account-pass-3f1', ...sandboxUrlParts]);
  });

  it('answers UPSTREAM_UNAUTHORIZED to billCategories when BILLING_PASSWORD is wrong', async () => {
    const app = await startApp({ BILLING_PASSWORD: 'wrong-billing-pass-8c2' });
    const { response, text } = await queryText(app, '{ billCategories { id } }');
    expect(response.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAUTHORIZED');
    expectNothingLeaked(text, ['wrong-billing-pass-8c2', ...sandboxUrlParts]);
  });
});

async function realStore(): Promise<CollectionStore> {
  const store = await openMemoryStore();
  return store;
}
