import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_ISSUER, DEVELOPMENT_PRIVATE_KEY_PATH } from '../src/auth/development-key.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { scrape } from './helpers/metrics.ts';
import { waitFor } from './helpers/wait.ts';
import { PRODUCTION_SANDBOX } from './helpers/production.ts';
import { tempDirectory } from './helpers/stores.ts';
import { bearer, serveJwks, TEST_AUDIENCE, TEST_ISSUER, TestIssuer, unsignedToken, writeJwksFile } from './helpers/tokens.ts';

/** Every guarded field of the contract's table, with an operation that reaches it and the scope it needs. */
const GUARDED = [
  { field: 'account', scope: 'accounts:read', query: '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName } }' },
  {
    field: 'postingAccount',
    scope: 'accounts:read',
    query: '{ postingAccount(accountNumber: "0123456789", beneficiaryBank: "000023") { accountName } }',
  },
  {
    field: '_entities',
    what: 'the Account entity',
    scope: 'accounts:read',
    query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName } } }',
    variables: { r: [{ __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' }] },
  },
  { field: 'bvn', scope: 'kyc:read', query: '{ bvn(number: "22212345678") { firstName } }' },
  {
    field: 'collectionNotification',
    scope: 'collections:read',
    query: '{ collectionNotification(settlementId: "none") { settlementId } }',
  },
  { field: 'collectionNotifications', scope: 'collections:read', query: '{ collectionNotifications { nodes { settlementId } } }' },
  {
    field: 'collectionSummary',
    scope: 'collections:read:all',
    query: '{ collectionSummary(from: "2026-11-01T00:00:00+01:00", to: "2026-11-02T00:00:00+01:00") { count } }',
  },
  {
    field: '_entities',
    what: 'the CollectionNotification entity',
    scope: 'collections:read',
    query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on CollectionNotification { settlementId } } }',
    variables: { r: [{ __typename: 'CollectionNotification', settlementId: 'none' }] },
  },
  {
    field: 'merchantLogin',
    scope: 'merchant:auth',
    query: 'mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") { accessToken } }',
  },
  { field: 'merchantLogout', scope: 'merchant:auth', query: 'mutation { merchantLogout(accessToken: "a", refreshToken: "r") }' },
  {
    field: 'merchantForgotPassword',
    scope: 'merchant:auth',
    query: 'mutation { merchantForgotPassword(email: "merchant@sandbox.ng") { status } }',
  },
  {
    field: 'merchantResetPassword',
    scope: 'merchant:auth',
    query: 'mutation { merchantResetPassword(resetCode: "000000", password: "New#Pass2026") { status } }',
  },
  {
    field: 'merchantRefreshSession',
    scope: 'merchant:auth',
    query: 'mutation { merchantRefreshSession(refreshToken: "r") { accessToken } }',
  },
  {
    field: 'transactionAuthorize',
    scope: 'transactions:authorize',
    query: 'mutation { transactionAuthorize(redirectUri: "https://app.example.com/cb") { code } }',
  },
  {
    field: 'transactionToken',
    scope: 'transactions:authorize',
    query: 'mutation { transactionToken(code: "c", redirectUri: "https://app.example.com/cb") { accessToken } }',
  },
];

const AUTH_CODES = ['UNAUTHENTICATED', 'UNAUTHORIZED_FIELD_OR_TYPE', 'FORBIDDEN'];

/** An app checking tokens of `issuer` (its JWKS served over HTTP), with the audience required. */
async function startGuarded(issuer: TestIssuer, env: Record<string, string> = {}): Promise<TestApp> {
  const jwks = await serveJwks(issuer);
  return startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE, ...env });
}

const refusals = (app: TestApp, reason: string) => scrape(app, `graphql_authorization_refusals_total{reason="${reason}"}`);

describe('who may read what', () => {
  describe.each(GUARDED)('$field ($scope)', ({ field, query, variables, scope }) => {
    it('is null with UNAUTHENTICATED without a token, with UNAUTHORIZED_FIELD_OR_TYPE without the scope, and answered with it', async () => {
      const issuer = await TestIssuer.create();
      const app = await startGuarded(issuer);

      const anonymous = await app.query(query, variables);
      expect(anonymous.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
      expect(anonymous.errors?.[0]?.path?.[0]).toBe(field);
      // A nullable field is null; a non-null mutation field takes its parent, the whole data, with it.
      // (An entity's slot in `_entities` is null.)
      expect([null, [null]]).toContainEqual(anonymous.data?.[field] ?? null);

      const otherScopes = 'banks:read accounts:write kyc:read:partial';
      const unscoped = await app.query(query, variables, bearer(await issuer.sign({ scope: otherScopes, audience: TEST_AUDIENCE })));
      expect(unscoped.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHORIZED_FIELD_OR_TYPE']);
      expect(unscoped.errors![0]!.message).toContain(scope.replace(':all', ''));

      const scoped = await app.query(
        query,
        variables,
        bearer(await issuer.sign({ scope, accounts: ['0123456789'], audience: TEST_AUDIENCE })),
      );
      // Answered, or refused by the bank for made-up arguments: never by authorization.
      expect((scoped.errors ?? []).filter((e) => AUTH_CODES.includes(e.extensions?.code))).toEqual([]);
      expect(await refusals(app, 'no_token')).toBe(1);
      expect(await refusals(app, 'missing_scope')).toBe(1);
    });
  });

  it('answers the rest of the operation: reference data and the schema need nothing', async () => {
    const app = await startGuarded(await TestIssuer.create());
    const { data, errors } = await app.query(
      '{ banks { code } bank(code: "000023") { name } billCategories { name } billCategory(id: 3) { name } bills(categoryId: 3) { name } _service { sdl } bvn(number: "22212345678") { firstName } }',
    );
    expect(errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['bvn'], 'UNAUTHENTICATED']]);
    expect(data!.banks.length).toBeGreaterThan(0);
    expect(data!.bank).toEqual({ name: 'Providus Bank' });
    expect(data!.billCategory.name).toBe('Cable TV');
    expect(data!.bills.length).toBeGreaterThan(0);
    expect(data!._service.sdl).toContain('@requiresScopes');
    expect(data!.bvn).toBeNull();
  });

  it('refuses an entity reference on its own: the other representations of the same _entities are answered', async () => {
    const issuer = await TestIssuer.create();
    const app = await startGuarded(issuer);
    const { data, errors } = await app.query(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bank { name } ... on Account { accountName } } }',
      {
        r: [
          { __typename: 'Bank', code: '000015' },
          { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' },
        ],
      },
      bearer(await issuer.sign({ scope: 'collections:read', audience: TEST_AUDIENCE })),
    );
    expect(data!._entities).toEqual([{ name: 'Zenith Bank' }, null]);
    expect(errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['_entities', 1], 'UNAUTHORIZED_FIELD_OR_TYPE']]);
  });
});

describe('tokens that are not accepted', () => {
  const BVN = '{ bvn(number: "22212345678") { firstName } }';

  it.each([
    [
      'signed by a key the issuer never published',
      'bad_signature',
      (issuer: TestIssuer) => issuer.signWithUnknownKey({ scope: 'kyc:read', audience: TEST_AUDIENCE }),
    ],
    [
      'expired beyond the 30 s of clock skew',
      'expired',
      (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, expiresIn: -45 }),
    ],
    [
      'not valid yet (nbf beyond the skew)',
      'not_yet_valid',
      (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, notBefore: 120 }),
    ],
    ['for another audience', 'wrong_audience', (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read', audience: 'another-api' })],
    ['without an audience', 'wrong_audience', (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read' })],
    [
      'from another issuer',
      'wrong_issuer',
      (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, issuer: 'https://evil.test' }),
    ],
    ['unsigned (alg: none)', 'algorithm_not_allowed', async () => unsignedToken({ scope: 'kyc:read', aud: TEST_AUDIENCE })],
    [
      'signed with HS256 (a shared secret)',
      'algorithm_not_allowed',
      async () => hs256({ scope: 'kyc:read', aud: TEST_AUDIENCE, iss: TEST_ISSUER }),
    ],
    [
      'with a non-string scope',
      'invalid_claims',
      (issuer: TestIssuer) => issuer.sign({ audience: TEST_AUDIENCE, extra: { scope: ['kyc:read'] } }),
    ],
    [
      'with an accounts claim that is not a list',
      'invalid_claims',
      (issuer: TestIssuer) => issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, extra: { accounts: '0123456789' } }),
    ],
    ['that is no JWT at all', 'malformed_token', async () => 'not-a-jwt'],
  ])('refuses a token %s with UNAUTHENTICATED, counted as %s', async (_what, reason, token) => {
    const issuer = await TestIssuer.create();
    const app = await startGuarded(issuer);
    const { data, errors } = await app.query(`{ banks { code } ${BVN.slice(1, -1)} }`, undefined, bearer(await token(issuer)));
    expect(errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(data!.bvn).toBeNull();
    expect(data!.banks.length).toBeGreaterThan(0);
    expect(await refusals(app, reason)).toBe(1);
  });

  it('accepts a token expired within the 30 s of clock skew', async () => {
    const issuer = await TestIssuer.create();
    const app = await startGuarded(issuer);
    const { errors } = await app.query(
      BVN,
      undefined,
      bearer(await issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, expiresIn: -10 })),
    );
    expect(errors).toBeUndefined();
  });

  it('refuses an Authorization header that is not "Bearer <JWT>", and never echoes or logs the token', async () => {
    const issuer = await TestIssuer.create();
    const app = await startGuarded(issuer);
    const token = await issuer.sign({ scope: 'kyc:read', audience: TEST_AUDIENCE, expiresIn: -600 });
    const basic = await app.query(BVN, undefined, { authorization: `Basic ${token}` });
    expect(basic.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const expired = await app.query(BVN, undefined, bearer(token));
    expect(JSON.stringify([basic, expired])).not.toContain(token.split('.')[1]);
  });

  it('stops the start on a JWKS file missing or not a JWKS, naming AUTH_JWKS_URL', async () => {
    const directory = tempDirectory();
    await expect(startApp({ AUTH_JWKS_URL: `file:${directory}/missing.json` })).rejects.toThrow(
      `AUTH_JWKS_URL=file:${directory}/missing.json could not be read: no such file`,
    );
    writeFileSync(join(directory, 'list.json'), '[]');
    await expect(startApp({ AUTH_JWKS_URL: `file:${directory}/list.json` })).rejects.toThrow(
      `AUTH_JWKS_URL=file:${directory}/list.json could not be read: ${directory}/list.json is not a JWKS document`,
    );
  });

  it('checks tokens against AUTH_JWKS_URL alone under the sandbox rules: any iss and aud, the key and exp still', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    const app = await startApp({ AUTH_JWKS_URL: jwks.url });
    const elsewhere = bearer(await issuer.sign({ scope: 'kyc:read', issuer: 'https://another-issuer.test.invalid' }));
    expect((await app.query(BVN, undefined, elsewhere)).errors).toBeUndefined();
    expect(
      (await app.query(BVN, undefined, bearer(await issuer.signWithUnknownKey({ scope: 'kyc:read' })))).errors?.[0]?.extensions?.code,
    ).toBe('UNAUTHENTICATED');
    expect(
      (await app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read', expiresIn: -60 })))).errors?.[0]?.extensions?.code,
    ).toBe('UNAUTHENTICATED');
  });

  it('follows a key rotation at the issuer: a token with a new kid makes it fetch the JWKS again', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    // A max age of 10 s: reads prompted by unknown keys wait a tenth of it, 1 s.
    const app = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_JWKS_MAX_AGE_S: '10' });
    expect((await app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read' })))).errors).toBeUndefined();
    expect(jwks.fetches()).toBe(1);
    // The same token again is not verified again, and a second token of a known key needs no fetch.
    await app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read', expiresIn: 300 })));
    expect(jwks.fetches()).toBe(1);

    await issuer.rotate();
    const rotated = bearer(await issuer.sign({ scope: 'kyc:read' }));
    await waitFor(async () => ((await app.query(BVN, undefined, rotated)).errors === undefined ? true : undefined));
    // Read again for the new key, well before the max age would have.
    expect(jwks.fetches()).toBe(2);
  });

  it('reads a file: JWKS again when a token names a key it did not hold', async () => {
    const issuer = await TestIssuer.create();
    const location = writeJwksFile(issuer);
    const app = await startApp({ AUTH_JWKS_URL: location, AUTH_ISSUER: TEST_ISSUER, AUTH_JWKS_MAX_AGE_S: '10' });
    await issuer.rotate();
    const before = await app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read' })));
    expect(before.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    writeFileSync(location.slice('file:'.length), JSON.stringify(issuer.jwks()));
    const after = bearer(await issuer.sign({ scope: 'kyc:read', expiresIn: 500 }));
    await waitFor(async () => ((await app.query(BVN, undefined, after)).errors === undefined ? true : undefined));
  });

  it('stops accepting a token it remembers once its key leaves the JWKS, and keeps the others', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    const app = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_JWKS_MAX_AGE_S: '1' });
    const compromised = issuer.kid;
    const old = bearer(await issuer.sign({ scope: 'kyc:read' }));
    expect((await app.query(BVN, undefined, old)).errors).toBeUndefined();
    await issuer.rotate();
    const fresh = bearer(await issuer.sign({ scope: 'kyc:read' }));

    issuer.withdraw(compromised);
    const refused = await waitFor(async () => {
      const { data, errors } = await app.query(BVN, undefined, old);
      return errors === undefined ? undefined : { data, errors };
    });
    expect(refused).toEqual({ data: { bvn: null }, errors: [expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })] });
    expect(refused.errors[0]!.message).toContain("key the issuer's JWKS does not hold");
    expect(await refusals(app, 'unknown_key')).toBeGreaterThan(0);
    expect((await app.query(BVN, undefined, fresh)).errors).toBeUndefined();
    expect((await app.query(BVN, undefined, old)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('reads the JWKS again once older than AUTH_JWKS_MAX_AGE_S, and keeps the last good read while the issuer is down', async () => {
    const issuer = await TestIssuer.create();
    const jwks = await serveJwks(issuer);
    const app = await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_JWKS_MAX_AGE_S: '1' });
    const remembered = bearer(await issuer.sign({ scope: 'kyc:read' }));
    expect((await app.query(BVN, undefined, remembered)).errors).toBeUndefined();
    expect(jwks.fetches()).toBe(1);

    jwks.down(true);
    // Past the max age a request has the JWKS read again, which fails: the last good read stands,
    // for the remembered token and for new ones of its keys.
    await waitFor(async () => {
      expect((await app.query(BVN, undefined, remembered)).errors).toBeUndefined();
      return jwks.fetches() > 1 ? true : undefined;
    });
    const during = await app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read', expiresIn: 400 })));
    expect(during.errors).toBeUndefined();
    expect(await refusals(app, 'keys_unavailable')).toBe(0);
    // A failed read is tried again after the cool-down (a tenth of the max age, 100 ms), not on every
    // request: at most once per cool-down the burst lasts, and never once for each of its 20.
    const tried = jwks.fetches();
    const burstStarted = performance.now();
    await Promise.all(Array.from({ length: 20 }, async () => app.query(BVN, undefined, bearer(await issuer.sign({ scope: 'kyc:read' })))));
    const coolDowns = Math.ceil((performance.now() - burstStarted) / 100);
    expect(jwks.fetches() - tried).toBeLessThanOrEqual(Math.min(19, 1 + coolDowns));

    jwks.down(false);
    await issuer.rotate();
    const rotated = bearer(await issuer.sign({ scope: 'kyc:read' }));
    await waitFor(async () => ((await app.query(BVN, undefined, rotated)).errors === undefined ? true : undefined));
  });
});

describe('the BVN of an account', () => {
  const PATHS = [
    { path: ['account'], query: '{ account(accountNumber: "0123456789", bankCode: "000023") { accountName bvn } }' },
    { path: ['postingAccount'], query: '{ postingAccount(accountNumber: "0123456789", beneficiaryBank: "000023") { accountName bvn } }' },
    {
      path: ['_entities', 0],
      query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName bvn } } }',
      variables: { r: [{ __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' }] },
    },
  ];

  it.each(PATHS)(
    'needs kyc:read beside accounts:read through $path.0, the name answered either way',
    async ({ path, query, variables }) => {
      const issuer = await TestIssuer.create();
      const app = await startGuarded(issuer);
      const sign = (scope: string) => issuer.sign({ scope, audience: TEST_AUDIENCE });
      const readAt = (data: unknown) => path.reduce<any>((value, key) => value?.[key], data);

      const names = await app.query(query, variables, bearer(await sign('accounts:read')));
      expect(readAt(names.data)).toEqual({ accountName: 'ADAEZE CHIOMA OKONKWO', bvn: null });
      expect(names.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[[...path, 'bvn'], 'UNAUTHORIZED_FIELD_OR_TYPE']]);
      expect(names.errors?.[0]?.message).toContain('kyc:read');

      const kyc = await app.query(query, variables, bearer(await sign('accounts:read kyc:read')));
      expect(kyc.errors).toBeUndefined();
      expect(readAt(kyc.data).bvn).toMatch(/^\d{11}$/);
    },
  );
});

describe('the development key', () => {
  async function developmentToken(): Promise<string> {
    const jwk = JSON.parse(readFileSync(DEVELOPMENT_PRIVATE_KEY_PATH, 'utf8')) as JWK & { kid: string; alg: string };
    return new SignJWT({ scope: 'kyc:read' })
      .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid })
      .setIssuer(DEVELOPMENT_ISSUER)
      .setExpirationTime('5m')
      .sign(await importJWK(jwk, jwk.alg));
  }

  it('signs the tokens of npm run token, which a local subgraph on AUTH_JWKS_URL=file:dev/auth-jwks.json accepts', async () => {
    const app = await startApp({ AUTH_JWKS_URL: 'file:dev/auth-jwks.json', AUTH_ISSUER: DEVELOPMENT_ISSUER });
    const script = join(import.meta.dirname, '..', 'scripts', 'token.ts');
    const minted = execFileSync(
      process.execPath,
      [script, '--scope', 'kyc:read collections:read', '--accounts', '0123456789', '--expires', '5m'],
      {
        encoding: 'utf8',
        env: { PATH: process.env.PATH },
      },
    ).trim();
    const { data, errors } = await app.query('{ bvn(number: "22212345678") { firstName } }', undefined, bearer(minted));
    expect(errors).toBeUndefined();
    expect(data!.bvn.firstName).toBeTruthy();
    // Its accounts claim holds: another account is refused.
    const summary = (account: string) =>
      app.query(
        `{ collectionSummary(accountNumber: "${account}", from: "2026-11-01T00:00:00Z", to: "2026-11-02T00:00:00Z") { count } }`,
        undefined,
        bearer(minted),
      );
    expect((await summary('0123456789')).data).toEqual({ collectionSummary: { count: 0 } });
    expect((await summary('1234567890')).errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
  });

  it('is refused in production even when a JWKS served over HTTP holds it', async () => {
    const published = JSON.parse(readFileSync('dev/auth-jwks.json', 'utf8')) as { keys: JWK[] };
    const jwks = await serveJwks({ jwks: () => published } as unknown as TestIssuer);
    const app = await startApp({ ...PRODUCTION_SANDBOX, AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: DEVELOPMENT_ISSUER });
    const { errors } = await app.query('{ bvn(number: "22212345678") { firstName } }', undefined, bearer(await developmentToken()));
    expect(errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(errors?.[0]?.message).toContain('development key');
    expect(await refusals(app, 'development_key')).toBe(1);
  });
});

/** An HS256 token, signed with a secret: an attacker's try at a symmetric algorithm. */
async function hs256(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode('a-secret-of-32-bytes-at-least-!!'));
}
