import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { startCountingBank, startLiveApp, type BankOperation } from './helpers/counting-bank.ts';
import type { FakeBankReply } from './helpers/fake-bank.ts';
import { productionHeaders } from './helpers/production.ts';
import { bankCalls, scrape, scrapeText } from './helpers/metrics.ts';
import { bearer, serveJwks, TEST_AUDIENCE, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';
import { waitFor } from './helpers/wait.ts';

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  cacheControl: string | undefined;
  age: string | undefined;
}

/** Posts an operation as a client or the router would; resolves with its status, body and caching headers. */
async function post(
  app: TestApp,
  query: string,
  { variables, headers = {} }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await request(app.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const header = (name: string) => response.headers[name] as string | undefined;
  return {
    status: response.statusCode,
    body: (await response.body.json()) as Answer['body'],
    cacheControl: header('cache-control'),
    age: header('age'),
  };
}

/** `graphql_response_cache_total{outcome}`: answered from the cache (`hit`), or executed and kept (`miss`). */
const cached = async (app: TestApp) => ({
  hit: await scrape(app, 'graphql_response_cache_total{outcome="hit"}'),
  miss: await scrape(app, 'graphql_response_cache_total{outcome="miss"}'),
});

const BANKS = '{ banks { code name } }';
/** An entity fetch of the catalogue, as the router sends one. */
const ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bank { name } ... on BillCategory { name } } }';
/** One that could also read an Account: it needs a scope, whatever the representations. */
const ANY_ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bank { name } ... on Account { accountName } } }';

describe('whole responses of public reference data', () => {
  it.each([
    ['the bank list', BANKS, undefined],
    ['one bank', '{ bank(code: "000023") { code name } }', undefined],
    ['the bill categories', '{ billCategories { id name listOrder } }', undefined],
    ['one bill category', '{ billCategory(id: 3) { name } }', undefined],
    ['a category with its bills', '{ billCategory(id: 3) { name bills { id name } } }', undefined],
    ['the bills of a category', 'query($id: Int!) { bills(categoryId: $id) { id name categoryId raw } }', { id: 3 }],
    [
      'Bank entities fetched by the router',
      ENTITIES,
      {
        r: [
          { __typename: 'Bank', code: '000023' },
          { __typename: 'Bank', code: '000013' },
        ],
      },
    ],
    ['a BillCategory entity fetched by the router', ENTITIES, { r: [{ __typename: 'BillCategory', id: 3 }] }],
  ])('answers %s from memory the second time: the same answer, its Cache-Control, and an age', async (_what, query, variables) => {
    const app = await startApp();
    const first = await post(app, query, { variables });
    expect(first.body.errors).toBeUndefined();
    expect(first.cacheControl).toBe('max-age=600, public');
    expect(first.age).toBeUndefined();
    const calls = await bankCalls(app);

    const second = await post(app, query, { variables });
    expect(second.body).toEqual(first.body);
    expect(second.cacheControl).toBe('max-age=600, public');
    expect(Number(second.age)).toBeGreaterThanOrEqual(0);
    expect(await cached(app)).toEqual({ hit: 1, miss: 1 });
    // Not a call to the bank either (bills are read from the bank on every execution).
    expect(await bankCalls(app)).toBe(calls);
  });

  it('keeps one answer per document and variables', async () => {
    const app = await startApp();
    const one = (code: string) => post(app, 'query($c: String!) { bank(code: $c) { name } }', { variables: { c: code } });
    expect((await one('000023')).body.data.bank.name).toBe('Providus Bank');
    expect((await one('000013')).body.data.bank.name).toBe('GTBank');
    expect((await one('000023')).body.data.bank.name).toBe('Providus Bank');
    expect(await cached(app)).toEqual({ hit: 1, miss: 2 });
  });

  it.each([
    [
      'the bank list next to a name enquiry',
      '{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName } }',
      undefined,
    ],
    [
      'a name enquiry with its bank',
      '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName bank { name } } }',
      undefined,
    ],
    [
      'an entity fetch mixing a Bank with an Account',
      ANY_ENTITIES,
      {
        r: [
          { __typename: 'Bank', code: '000023' },
          { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' },
        ],
      },
    ],
    ['an entity fetch of Banks whose document could read an Account', ANY_ENTITIES, { r: [{ __typename: 'Bank', code: '000023' }] }],
    ['an answer with an error', '{ banks { code } bank(code: "not-a-code") { name } }', undefined],
    ['the SDL (_service)', '{ _service { sdl } }', undefined],
    ['introspection', '{ __schema { queryType { name } } }', undefined],
    ['introspection next to the bank list', '{ banks { code } __schema { queryType { name } } }', undefined],
    ['a mutation', 'mutation { merchantForgotPassword(email: "merchant@sandbox.ng") { status } }', undefined],
  ])('never keeps %s', async (_what, query, variables) => {
    const app = await startApp();
    await post(app, query, { variables });
    const second = await post(app, query, { variables });
    expect(second.age).toBeUndefined();
    expect(await cached(app)).toEqual({ hit: 0, miss: 0 });
  });

  it('asks the bank again for a mixed document, every time', async () => {
    const app = await startApp();
    const mixed = '{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName } }';
    await post(app, mixed);
    await post(app, mixed);
    expect(await bankCalls(app, { operation: 'lookupAccount' })).toBe(2);
  });
});

type Fault = (reply: FakeBankReply) => void;
const DOWN: Fault = (reply) => reply.status(503).text('Service Unavailable');

/** A live bank whose operations fail as `faults` says, and an app over it (its queries carry a token reading everything). */
async function startFaultyBank(env: Record<string, string>) {
  const faults: Partial<Record<BankOperation, Fault>> = {};
  const bank = await startCountingBank({
    intercept: (operation, _request, reply) => {
      faults[operation]?.(reply);
      return faults[operation] !== undefined;
    },
  });
  return { bank, faults, app: await startLiveApp(bank.url, env) };
}

/** What startLiveApp's callers carry: a token of the production rules' issuer that reads everything. */
const caller = await productionHeaders();

describe('never fresher than its data', () => {
  it('makes an answer public, and keeps it, only for what remains of its list copy’s freshness', async () => {
    const app = await startApp({ BANK_LIST_TTL_S: '30' });
    await post(app, '{ bank(code: "000013") { name } }');
    // Each look a document of its own (an alias), so none is answered from the cache.
    let look = 0;
    const older = await waitFor(async () => {
      const answer = await post(app, `{ banks { code } look${(look += 1)}: __typename }`);
      return answer.cacheControl === 'max-age=30, public' ? undefined : answer;
    }, 10_000);
    const maxAge = Number(/^max-age=(\d+), public$/.exec(older.cacheControl!)?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThan(30);

    const again = await post(app, `{ banks { code } look${look}: __typename }`);
    expect(again.age).toBeDefined();
    expect(again.cacheControl).toBe(older.cacheControl);
  });

  it('keeps nothing built on a stale list: it is no-store, and the next request asks the bank again', async () => {
    const { bank, faults, app } = await startFaultyBank({ BANK_LIST_TTL_S: '1' });
    const fresh = await post(app, BANKS, { headers: caller });
    expect(fresh.cacheControl).toBe('max-age=1, public');
    faults.listBanks = DOWN;
    // Answered from the cache, then, once its second is up, from the stale list.
    const stale = await waitFor(async () => {
      const answer = await post(app, BANKS, { headers: caller });
      return bank.calls('listBanks') > 1 ? answer : undefined;
    });
    expect(stale.body).toEqual(fresh.body);
    expect(stale.cacheControl).toBe('no-store');
    const [{ hit }, calls] = [await cached(app), bank.calls('listBanks')];

    const next = await post(app, BANKS, { headers: caller });
    expect(next.body).toEqual(fresh.body);
    expect(next.age).toBeUndefined();
    expect(bank.calls('listBanks')).toBeGreaterThan(calls);
    expect((await cached(app)).hit).toBe(hit);
  });

  it('never keeps an error: once the bank is back, the list is answered', async () => {
    const { faults, app } = await startFaultyBank({});
    faults.listBanks = DOWN;
    const failed = await post(app, BANKS, { headers: caller });
    expect(failed.body.errors![0]!.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE' });
    delete faults.listBanks;
    const answered = await post(app, BANKS, { headers: caller });
    expect(answered.body.errors).toBeUndefined();
    expect(answered.body.data.banks).toEqual([{ code: '000023', name: 'Providus Bank' }]);
  });
});

const MIXED = '{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName } }';
const ROUTER_SECRET = 'router-s3cret-value';

/** Two apps checking `issuer`'s tokens: `primed`, whose cache a caller with every right has filled with `query`, and `cold`. */
async function primedAndCold(issuer: TestIssuer, query: string, env: Record<string, string> = {}, primer: Record<string, string> = {}) {
  const jwks = await serveJwks(issuer);
  const guarded = { AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE, ...env };
  const [primed, cold] = [await startApp(guarded), await startApp(guarded)];
  const good = { ...bearer(await issuer.sign({ scope: 'accounts:read', accounts: ['0123456789'], audience: TEST_AUDIENCE })), ...primer };
  const primedAnswer = await post(primed, query, { headers: good });
  expect(primedAnswer.body.errors).toBeUndefined();
  return { primed, cold };
}

/** What an answer is, to its caller and to operators: the reply, and every refusal counted, by reason. */
async function seen(app: TestApp, query: string, headers: Record<string, string>) {
  const { status, body, cacheControl } = await post(app, query, { headers });
  const refusals = (await scrapeText(app)).split('\n').filter((line) => line.startsWith('graphql_authorization_refusals_total{'));
  return { status, body, cacheControl, refusals };
}

// Each caller that would be refused something, against a cache a caller with every right filled:
// the same answer, the same refusals, as from an app whose cache has never seen the document.
const CALLERS: { who: string; headers: (issuer: TestIssuer) => Promise<Record<string, string>> }[] = [
  { who: 'an anonymous caller', headers: async () => ({}) },
  {
    who: 'a caller without the scope',
    headers: async (issuer) => bearer(await issuer.sign({ scope: 'kyc:read', accounts: ['0123456789'], audience: TEST_AUDIENCE })),
  },
  {
    who: 'an expired token',
    headers: async (issuer) => bearer(await issuer.sign({ scope: 'accounts:read', expiresIn: -120, audience: TEST_AUDIENCE })),
  },
  {
    who: 'a token of an unknown key',
    headers: async (issuer) => bearer(await issuer.signWithUnknownKey({ scope: 'accounts:read', audience: TEST_AUDIENCE })),
  },
  {
    who: 'a token for another audience',
    headers: async (issuer) => bearer(await issuer.sign({ scope: 'accounts:read', audience: 'another-api' })),
  },
  { who: 'a malformed Authorization', headers: async () => ({ authorization: 'Basic dXNlcjpwYXNz' }) },
];

describe('callers against a primed cache', () => {
  describe.each(CALLERS)('$who', ({ headers }) => {
    it('gets the public list exactly as without the cache, and from it', async () => {
      const issuer = await TestIssuer.create();
      const { primed, cold } = await primedAndCold(issuer, BANKS);
      const caller = await headers(issuer);
      const fromCache = await seen(primed, BANKS, caller);
      expect(fromCache).toEqual(await seen(cold, BANKS, caller));
      // Public reference data needs nothing, whoever asks: answered whole, no refusal.
      expect(fromCache.body.errors).toBeUndefined();
      expect(fromCache.body.data.banks.length).toBeGreaterThan(20);
      expect(await cached(primed)).toEqual({ hit: 1, miss: 1 });
    });

    it('is refused the name enquiry beside the list exactly as without the cache, never from it', async () => {
      const issuer = await TestIssuer.create();
      const { primed, cold } = await primedAndCold(issuer, MIXED);
      const caller = await headers(issuer);
      const answer = await seen(primed, MIXED, caller);
      expect(answer).toEqual(await seen(cold, MIXED, caller));
      expect(answer.body.data.account).toBeNull();
      expect(answer.body.errors?.map((e) => e.extensions?.code)).toEqual([
        expect.stringMatching(/^(UNAUTHENTICATED|UNAUTHORIZED_FIELD_OR_TYPE)$/),
      ]);
      expect(await cached(primed)).toEqual({ hit: 0, miss: 0 });
    });
  });

  it.each([
    ['without Router-Secret', {}],
    ['with the wrong Router-Secret', { 'router-secret': 'not-the-secret' }],
  ])('refuses a request %s with ROUTER_SECRET set exactly as without the cache', async (_what, secret) => {
    const issuer = await TestIssuer.create();
    const { primed, cold } = await primedAndCold(issuer, BANKS, { ROUTER_SECRET }, { 'router-secret': ROUTER_SECRET });
    const refused = await post(primed, BANKS, { headers: secret });
    expect(refused.status).toBe(401);
    expect(refused.body.errors![0]!.extensions).toEqual({ code: 'ROUTER_SECRET_REQUIRED' });
    expect(refused).toEqual(await post(cold, BANKS, { headers: secret }));
    expect(await cached(primed)).toEqual({ hit: 0, miss: 1 });
  });
});
