import type { Client } from 'graphql-ws';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OPERATION_COST, DEFAULT_WEBHOOK_MAX_BODY_BYTES } from '../src/config/index.ts';
import { startApp, type GraphQLResponse } from './helpers/app.ts';
import { startCountingBank, startLiveApp } from './helpers/counting-bank.ts';
import { captureLogs } from './helpers/logs.ts';
import { productionHeaders } from './helpers/production.ts';

// What one operation may make the bank do: priced by the schema, refused before it runs when too
// dear, cut off at the budget when the estimate was low, over HTTP and WebSocket alike.

const SCREEN = `query FirstLook {
  banks { code name }
  account(accountNumber: "0123456789", bankCode: "000023") { accountName bvn bank { code name } }
  billCategories { id name bills { id name } }
}`;

/** `count` aliased name enquiries of distinct accounts. */
function aliasedEnquiries(count: number): string {
  const fields = Array.from(
    { length: count },
    (_, i) => `a${i}: account(accountNumber: "${String(i).padStart(10, '0')}", bankCode: "000023") { accountName }`,
  );
  return `{ ${fields.join(' ')} }`;
}

/** `count` aliases of a field that costs no bank call (the cached bank list). */
function aliasedBanks(count: number): string {
  return `{ ${Array.from({ length: count }, (_, i) => `a${i}: banks { code }`).join(' ')} }`;
}

/** Runs one operation over graphql-ws: the result, or the errors graphql-ws sent instead. */
function overWebSocket(client: Client, query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse> {
  return new Promise((resolve) => {
    let result: GraphQLResponse = { status: 101 };
    client.subscribe(
      { query, variables },
      {
        next: (value) => (result = { status: 101, ...(value as object) }),
        error: (errors) => resolve({ status: 101, errors: errors as GraphQLResponse['errors'] }),
        complete: () => resolve(result),
      },
    );
  });
}

async function startCounted(env: Record<string, string> = {}, categories?: number) {
  const bank = await startCountingBank({ categories });
  const app = await startLiveApp(bank.url, env);
  return { bank, app };
}

describe('the bank-call budget (MAX_OPERATION_COST)', () => {
  it('serves the README screen within the default budget, over HTTP and WebSocket', async () => {
    const { bank, app } = await startCounted();
    const http = await app.query(SCREEN);
    expect(http.errors).toBeUndefined();
    expect(http.data!.account.bank).toEqual({ code: '000023', name: 'Providus Bank' });
    expect(http.data!.billCategories).toHaveLength(6);
    expect(http.data!.billCategories[5].bills).toHaveLength(2);
    // One name enquiry, the category list, each category's bills, and the bank list (then cached).
    expect(bank.calls()).toBe(1 + 1 + 6 + 1);

    const ws = await overWebSocket(app.wsClient(), SCREEN);
    expect(ws.errors).toBeUndefined();
    expect(ws.data!.billCategories).toHaveLength(6);
  });

  it('refuses an operation estimated over the budget before any bank call, saying the estimate and the limit', async () => {
    const { bank, app } = await startCounted();
    const response = await app.query(aliasedEnquiries(60));
    expect(response.status).toBe(400);
    expect(response.data).toBeUndefined();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]!.extensions).toEqual({
      code: 'COST_ESTIMATED_TOO_EXPENSIVE',
      cost: { estimated: 60, max: DEFAULT_MAX_OPERATION_COST },
    });
    expect(response.errors![0]!.message).toContain(`estimated 60 bank calls and store reads, more than the ${DEFAULT_MAX_OPERATION_COST}`);

    const ws = await overWebSocket(app.wsClient(), aliasedEnquiries(60));
    expect(ws.errors![0]!.extensions).toEqual(response.errors![0]!.extensions);
    expect(bank.calls()).toBe(0);
  });

  it('refuses 500 aliased name enquiries with zero bank calls, over HTTP and WebSocket', async () => {
    const { bank, app } = await startCounted();
    const http = await app.query(aliasedEnquiries(500));
    const ws = await overWebSocket(app.wsClient(), aliasedEnquiries(500));
    for (const response of [http, ws]) {
      expect(response.data ?? undefined).toBeUndefined();
      // Too long a document to parse (5,000 tokens), whatever it would have cost.
      expect(response.errors![0]!.extensions!.code).toBe('GRAPHQL_PARSE_FAILED');
    }
    expect(bank.calls()).toBe(0);
  });

  it('prices entity references from the router by their count: 40 Account references are refused', async () => {
    const { bank, app } = await startCounted();
    const representations = Array.from({ length: 40 }, (_, i) => ({
      __typename: 'Account',
      accountNumber: String(i).padStart(10, '0'),
      bankCode: '000023',
    }));
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName bank { name } } } }';
    const response = await app.query(query, { r: representations });
    expect(response.errors![0]!.extensions!.cost).toEqual({ estimated: 40, max: DEFAULT_MAX_OPERATION_COST });
    expect((await app.query(query, { r: representations.slice(0, 3) })).errors).toBeUndefined();
    // Three name enquiries and the bank list; nothing for the refused 40.
    expect(bank.calls('lookupAccount')).toBe(3);
  });

  it('counts a raised MAX_OPERATION_COST: the same 60 enquiries pass under a budget of 60', async () => {
    const { bank, app } = await startCounted({ MAX_OPERATION_COST: '60' });
    const response = await app.query(aliasedEnquiries(60));
    expect(response.errors).toBeUndefined();
    expect(bank.calls('lookupAccount')).toBe(60);
  });

  it('cuts an under-estimated operation off at the budget, before the bank', async () => {
    // 12 categories where @listSize assumes 10: priced at 11 (the list, and the bills of 10), the
    // bills of 12 need 12 calls; the list itself comes from its process-wide cache, which no budget
    // counts. The refused non-null bills null the list, and with it the whole answer.
    const { bank, app } = await startCounted({ MAX_OPERATION_COST: '11' }, 12);
    const response = await app.query('{ billCategories { id bills { id } } }');
    expect(response.status).toBe(200);
    expect(response.data).toBeNull();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]!.extensions).toEqual({ code: 'COST_ACTUAL_TOO_EXPENSIVE', cost: { max: 11 } });
    expect(response.errors![0]!.path).toEqual(['billCategories', 11, 'bills']);
    expect(bank.calls('listCategories')).toBe(1);
    expect(bank.calls('listBills')).toBe(11);
  });
});

describe('hostile documents', () => {
  const cases = [
    { name: '2,000 aliases', query: aliasedBanks(2_000), code: 'GRAPHQL_PARSE_FAILED' },
    { name: 'a 30,000-token document', query: `{ ${'__typename '.repeat(30_000)}}`, code: 'GRAPHQL_PARSE_FAILED' },
    { name: '101 aliases', query: aliasedBanks(101), code: 'GRAPHQL_VALIDATION_FAILED', message: /Aliases limit of 100 exceeded/ },
    {
      name: 'a depth of 11',
      query: `{ __type(name: "Query") { ${'ofType { '.repeat(10)}name${' }'.repeat(10)} } }`,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: /depth limit of 10 exceeded/,
    },
    {
      name: '51 directives',
      query: `{ ${Array.from({ length: 51 }, () => '__typename @include(if: true)').join(' ')} }`,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: /Directives limit of 50 exceeded/,
    },
  ];

  it.each(cases)('refuses $name over HTTP and WebSocket, with no bank call', async ({ query, code, message }) => {
    const { bank, app } = await startCounted();
    const http = await app.query(query);
    const ws = await overWebSocket(app.wsClient(), query);
    expect(http.status).toBe(400);
    for (const response of [http, ws]) {
      expect(response.data ?? undefined).toBeUndefined();
      expect(response.errors![0]!.extensions!.code).toBe(code);
      if (message) expect(response.errors![0]!.message).toMatch(message);
    }
    expect(bank.calls()).toBe(0);
  });

  const LOGIN = 'merchantLogin(email: "merchant@sandbox.ng", password: "guess") { accessToken }';
  const credentialCases = [
    {
      name: '25 aliased merchantLogins',
      query: `mutation { ${Array.from({ length: 25 }, (_, i) => `p${i}: ${LOGIN}`).join(' ')} }`,
      named: /merchantLogin ×25/,
    },
    {
      name: 'a merchantLogin and a transactionToken through a fragment',
      query: `mutation { ${LOGIN} ...Exchange } fragment Exchange on Mutation { transactionToken(code: "c", redirectUri: "https://app.example.com/cb") { accessToken } }`,
      named: /merchantLogin, transactionToken/,
    },
  ];

  it.each(credentialCases)('refuses $name in one operation over HTTP and WebSocket, before any bank call', async ({ query, named }) => {
    const logs = captureLogs();
    const bank = await startCountingBank();
    const app = await startLiveApp(bank.url, {}, { logger: logs.logger });
    const http = await app.query(query);
    const ws = await overWebSocket(app.wsClient({ headers: await productionHeaders() }), query);
    expect(http.status).toBe(400);
    for (const response of [http, ws]) {
      expect(response.data ?? undefined).toBeUndefined();
      expect(response.errors).toEqual([
        expect.objectContaining({ extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) }),
      ]);
      expect(response.errors![0]!.message).toMatch(/at most one/);
      expect(response.errors![0]!.message).toMatch(named);
    }
    expect(bank.calls()).toBe(0);
    expect(logs.logs.filter((entry) => (entry.level as number) >= 50)).toEqual([]);
  });

  it('lets one credential-bearing mutation through, beside mutations that carry none', async () => {
    const { bank, app } = await startCounted();
    const { status, errors } = await app.query(`mutation { ${LOGIN} merchantLogout(accessToken: "a", refreshToken: "r") }`);
    expect(status).toBe(200);
    expect(errors?.map((e) => e.extensions?.code)).not.toContain('GRAPHQL_VALIDATION_FAILED');
    // The counting bank refuses the wallet, but each mutation reached it.
    expect(bank.calls()).toBe(2);
  });

  it("accepts Apollo Sandbox's introspection query, where introspection is on (the sandbox rules)", async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const app = await startApp();
    const query = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      inputValueDeprecation: true,
    });
    const http = await app.query(query);
    expect(http.errors).toBeUndefined();
    const ws = await overWebSocket(app.wsClient(), query);
    expect(ws.errors).toBeUndefined();
  });

  it('refuses a batched HTTP request (several operations in one body)', async () => {
    const { bank, app } = await startCounted();
    const response = await request(app.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: aliasedEnquiries(20) }, { query: aliasedEnquiries(20) }]),
    });
    expect(response.statusCode).toBe(400);
    expect(await response.body.text()).toMatch(/batching/i);
    expect(bank.calls()).toBe(0);
  });
});

describe('store reads in the budget (MAX_OPERATION_COST)', () => {
  const YEAR = { from: '2025-11-26T00:00:00+01:00', to: '2026-11-26T00:00:00+01:00' };
  const summaries = (count: number) =>
    `query($from: DateTime!, $to: DateTime!) { ${Array.from({ length: count }, (_, i) => `s${i}: collectionSummary(from: $from, to: $to) { count transactionAmount days { date count } }`).join(' ')} }`;

  it("serves a screen's month with its days beside a page of 20 and a few name enquiries", async () => {
    const app = await startApp();
    const screen = `{
      collectionSummary(accountNumber: "0123456789", from: "2026-10-01T00:00:00+01:00", to: "2026-11-01T00:00:00+01:00") { count days { date count } }
      collectionNotifications(accountNumber: "0123456789", first: 20) { nodes { settlementId } }
      a: account(accountNumber: "0123456789") { accountName }
      b: account(accountNumber: "1234567890") { accountName }
      c: account(accountNumber: "0011223344") { accountName }
    }`;
    const response = await app.query(screen);
    expect(response.errors).toBeUndefined();
    expect(response.data!.collectionSummary.days).toHaveLength(31);
  });

  it("serves a year's summary on its own, and refuses a document of a hundred before reading anything", async () => {
    const app = await startApp();
    const one = await app.query(summaries(1), YEAR);
    expect(one.errors).toBeUndefined();
    expect(one.data!.s0.days.length).toBeGreaterThanOrEqual(365);
    const hundred = await app.query(summaries(100), YEAR);
    expect(hundred.status).toBe(400);
    expect(hundred.data).toBeUndefined();
    expect(hundred.errors![0]!.extensions).toEqual({
      code: 'COST_ESTIMATED_TOO_EXPENSIVE',
      cost: { estimated: 2_300, max: DEFAULT_MAX_OPERATION_COST },
    });
    const ws = await overWebSocket(app.wsClient(), summaries(100), YEAR);
    expect(ws.errors![0]!.extensions).toEqual(hundred.errors![0]!.extensions);
    // Two years' worth in one document is already past the default budget.
    expect((await app.query(summaries(2), YEAR)).errors![0]!.extensions!.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
  });
});

describe('DateTime offsets and the prices read from them', () => {
  const YEAR = 'query($from: DateTime!, $to: DateTime!) { collectionSummary(from: $from, to: $to) { count } }';
  const codes = (response: GraphQLResponse) => response.errors?.map((error) => error.extensions?.code);

  it('takes offsets from -12:00 to +14:00 and refuses any other, as a literal or a variable, naming the range', async () => {
    const app = await startApp();
    for (const offset of ['-12:00', '+14:00', 'Z', '+05:45']) {
      const response = await app.query(YEAR, { from: `2026-10-01T00:00:00${offset}`, to: `2026-10-02T00:00:00${offset}` });
      expect(response.errors, offset).toBeUndefined();
    }
    for (const offset of ['+99:00', '+14:30', '-12:30', '+05:75', '-23:59']) {
      const response = await app.query(YEAR, { from: `2026-10-01T00:00:00${offset}`, to: `2026-10-02T00:00:00${offset}` });
      // Both ends refused, each naming itself.
      expect(codes(response), offset).toEqual(['BAD_USER_INPUT', 'BAD_USER_INPUT']);
      expect(response.errors![0]!.message).toContain('from -12:00 to +14:00');
      const literal = await app.query(`{ collectionSummary(from: "2026-10-01T00:00:00${offset}", to: "2026-10-02T00:00:00Z") { count } }`);
      expect(literal.status, offset).toBe(400);
      expect(literal.errors![0]!.message).toContain('from -12:00 to +14:00');
    }
  });

  it('prices a range from the same reading of its ends as the resolver: 25 year-long summaries written with +99:00 are refused before anything runs', async () => {
    const app = await startApp();
    const aliases = Array.from({ length: 25 }, (_, i) => `s${i}: collectionSummary(from: $from, to: $to) { count }`).join(' ');
    const response = await app.query(`query($from: DateTime!, $to: DateTime!) { ${aliases} }`, {
      from: '2025-11-26T00:00:00+99:00',
      to: '2026-11-26T00:00:00+99:00',
    });
    expect(response.status).toBe(400);
    expect(response.errors![0]!.extensions).toEqual({
      code: 'COST_ESTIMATED_TOO_EXPENSIVE',
      cost: { estimated: 25 * 23, max: DEFAULT_MAX_OPERATION_COST },
    });
  });
});

describe('raw bodies in the budget', () => {
  /** An app whose quarantine holds `count` refused bodies of the largest size the webhook reads. */
  async function withLargestBodies(count: number) {
    const app = await startApp();
    const body = 'x'.repeat(DEFAULT_WEBHOOK_MAX_BODY_BYTES);
    for (let i = 0; i < count; i += 1) expect((await app.deliver(body)).reply.responseCode).toBe('02');
    return app;
  }

  it('serves the review screen and the most raw bodies the default budget pays for, and refuses five pages of both bodies before reading any', async () => {
    const app = await withLargestBodies(30);
    const screen = await app.query(`query AwaitingReview {
      quarantinedDeliveries(reviewed: false, first: 20) {
        nodes { id kind reason detail responseCode receivedAt sessionId settlementId accountNumber rawBody }
        pageInfo { hasNextPage endCursor }
      }
    }`);
    expect(screen.errors).toBeUndefined();
    expect(screen.data!.quarantinedDeliveries.nodes).toHaveLength(20);
    // 1 + 20 and 1 + 3: 25, the default budget, in full.
    const worst = await app.query(`{
      a: quarantinedDeliveries(first: 100) { nodes { rawBody rawBodyBase64 } }
      b: quarantinedDeliveries(first: 30) { nodes { rawBody } }
    }`);
    expect(worst.status).toBe(200);
    expect(worst.errors).toBeUndefined();
    expect(worst.data!.a.nodes).toHaveLength(30);
    expect(worst.data!.b.nodes[29].rawBody).toHaveLength(DEFAULT_WEBHOOK_MAX_BODY_BYTES);
    const aliases = Array.from({ length: 5 }, (_, i) => `q${i}: quarantinedDeliveries(first: 100) { nodes { rawBody rawBodyBase64 } }`);
    const five = await app.query(`{ ${aliases.join(' ')} }`);
    expect(five.status).toBe(400);
    expect(five.errors![0]!.extensions).toEqual({
      code: 'COST_ESTIMATED_TOO_EXPENSIVE',
      cost: { estimated: 5 * 21, max: DEFAULT_MAX_OPERATION_COST },
    });
    const notifications = await app.query(
      '{ collectionNotifications(first: 100) { nodes { rawBody } } q: quarantinedDeliveries(first: 100) { nodes { rawBodyBase64 } } m: collectionNotifications(first: 100) { nodes { rawBodyBase64 } } }',
    );
    expect(notifications.errors![0]!.extensions!.cost).toEqual({ estimated: 33, max: DEFAULT_MAX_OPERATION_COST });
  });
});
