import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp } from './helpers/app.ts';
import { bankCalls } from './helpers/metrics.ts';
import { tempDirectory } from './helpers/stores.ts';

// What the federation router relies on: a Federation 2 SDL that composes, and entity references
// resolved from the bank or the store.
describe('federation', () => {
  it('publishes a Federation 2 SDL that composes into a supergraph', async () => {
    const { query } = await startApp();
    const { data } = await query('{ _service { sdl } }');
    const sdl: string = data!._service.sdl;
    expect(sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.(\d+)"/);
    expect(Number(/federation\/v2\.(\d+)/.exec(sdl)![1])).toBeGreaterThanOrEqual(4);
    expect(sdl).toContain('@contact(');
    expect(sdl).toContain('type Merchant @key(fields: "id", resolvable: false)');

    // A second subgraph that extends our entities, as a product subgraph would.
    const orders = parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
      type Account @key(fields: "accountNumber bankCode", resolvable: false) { accountNumber: String! bankCode: String! }
      type Order @key(fields: "id") { id: ID! payee: Account }
      type Query { order(id: ID!): Order }
    `);
    const result = composeServices([
      { name: 'bank', typeDefs: parse(sdl), url: 'http://bank' },
      { name: 'orders', typeDefs: orders, url: 'http://orders' },
    ]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.supergraphSdl).toContain('type Subscription');
  });

  it('carries the bank-call prices (@cost, @listSize) through schema:print into the supergraph', async () => {
    const printed = execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'print-schema.ts')], { encoding: 'utf8' });
    expect(printed).toContain('import: ["@key", "@shareable", "@cost", "@listSize", "@authenticated", "@requiresScopes"]');
    expect(printed).toContain(
      'account(accountNumber: String!, bankCode: String): Account @cost(weight: 1) @authenticated @requiresScopes(scopes: [["accounts:read"]])',
    );
    expect(printed).toContain('billCategories: [BillCategory!]! @cost(weight: 1) @listSize(assumedSize: 10)');
    expect(printed).toContain('type Bank @key(fields: "code") @cost(weight: 0)');

    const result = composeServices([{ name: 'bank', typeDefs: parse(printed), url: 'http://bank' }]);
    expect(result.errors ?? []).toEqual([]);
    // What Apollo Router's demand control reads: the directives, kept under their imported names.
    const supergraph = result.supergraphSdl!;
    expect(supergraph).toContain(
      'account(accountNumber: String!, bankCode: String): Account @authenticated @requiresScopes(scopes: [["accounts:read"]]) @cost(weight: 1)',
    );
    expect(supergraph).toContain('billCategories: [BillCategory!]! @cost(weight: 1) @listSize(assumedSize: 10)');
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/cost/v0.1", import: ["@listSize"])');
    expect(supergraph).toMatch(/directive @cost\(weight: Int!\)/);
  });

  it('carries the access rules (@authenticated, @requiresScopes) through schema:print into the supergraph, for the router to enforce', () => {
    const printed = execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'print-schema.ts')], { encoding: 'utf8' });
    const result = composeServices([{ name: 'bank', typeDefs: parse(printed), url: 'http://bank' }]);
    expect(result.errors ?? []).toEqual([]);
    const supergraph = result.supergraphSdl!;
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/authenticated/v0.1", for: SECURITY)');
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", for: SECURITY)');
    const collections = '@authenticated @requiresScopes(scopes: [["collections:read"], ["collections:read:all"]])';
    expect(supergraph).toContain(`bvn(number: String!): BvnDetails @authenticated @requiresScopes(scopes: [["kyc:read"]])`);
    expect(supergraph).toContain(
      `incomingTransfer(accountNumber: String, after: String, confirmed: Boolean = false): CollectionNotification! ${collections}`,
    );
    expect(supergraph).toContain('): BankTransactionCheck @authenticated @requiresScopes(scopes: [["collections:reconcile"]])');
    expect(supergraph).toContain('): ReconcileReport @authenticated @requiresScopes(scopes: [["collections:reconcile"]])');
    // A check's stored record and quarantined deliveries are read under its scope too.
    expect(supergraph).toMatch(
      /type CollectionNotification[^{]*@requiresScopes\(scopes: \[\["collections:read"\], \["collections:read:all"\], \["collections:reconcile"\]\]\)/,
    );
    expect(supergraph).toMatch(
      /type QuarantinedDelivery[^{]*@requiresScopes\(scopes: \[\["collections:review"\], \["collections:reconcile"\]\]\)/,
    );
    expect(supergraph).toContain(
      'merchantLogin(email: String!, password: String!): MerchantSession @authenticated @requiresScopes(scopes: [["merchant:auth"]])',
    );
    expect(supergraph).toContain(
      'transactionToken(code: String!, redirectUri: String!): TransactionToken @authenticated @requiresScopes(scopes: [["transactions:authorize"]])',
    );
    expect(supergraph).toMatch(/\n  banks: \[Bank!\]!\n/);
  });

  it('prints with npm run schema:print exactly the SDL the running subgraph serves', async () => {
    const { query } = await startApp();
    const { data } = await query('{ _service { sdl } }');
    const printed = execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'print-schema.ts')], { encoding: 'utf8' });
    expect(printed.startsWith('extend schema @link(url: "https://specs.apollo.dev/federation/v2.')).toBe(true);
    expect(printed).toBe(`${data!._service.sdl.trim()}\n`);
  });

  it('prints the bank catalogue with BANK_LIST_TTL_S as its cache maxAge, and refuses a bad one by name', () => {
    const script = join(import.meta.dirname, '..', 'scripts', 'print-schema.ts');
    const printed = execFileSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, BANK_LIST_TTL_S: '60' } });
    expect(printed).toContain('type Bank @key(fields: "code") @cost(weight: 0) @cacheControl(scope: PUBLIC, maxAge: 60)');
    expect(printed).toContain('type BillCategory @key(fields: "id") @cacheControl(scope: PUBLIC, maxAge: 60)');
    const refused = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, BANK_LIST_TTL_S: 'ten' } });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('BANK_LIST_TTL_S must be a whole number from 0 to 86400, got "ten"');
  });

  it('reads .env as the server does: PUBLISH_ACCESS_DIRECTIVES=false there leaves the access directives out', () => {
    const directory = tempDirectory();
    writeFileSync(join(directory, '.env'), 'PUBLISH_ACCESS_DIRECTIVES=false\nBANK_LIST_TTL_S=90\n');
    const script = join(import.meta.dirname, '..', 'scripts', 'print-schema.ts');
    const printed = execFileSync(process.execPath, [script], { encoding: 'utf8', cwd: directory });
    expect(printed).toContain('type Bank @key(fields: "code") @cost(weight: 0) @cacheControl(scope: PUBLIC, maxAge: 90)');
    expect(printed).not.toContain('@authenticated');
    expect(printed).not.toContain('@requiresScopes');
  });

  it('resolves Account, Bank and BillCategory references through the bank', async () => {
    const { query } = await startApp();
    const { data, errors } = await query(
      `query($r: [_Any!]!) { _entities(representations: $r) {
        ... on Account { accountName bank { name } }
        ... on Bank { name }
        ... on BillCategory { name bills { name } }
      } }`,
      {
        r: [
          { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' },
          { __typename: 'Bank', code: '000015' },
          { __typename: 'BillCategory', id: 3 },
          { __typename: 'Bank', code: '999999' },
        ],
      },
    );
    expect(errors).toBeUndefined();
    expect(data!._entities[0]).toEqual({ accountName: 'ADAEZE CHIOMA OKONKWO', bank: { name: 'Providus Bank' } });
    expect(data!._entities[1]).toEqual({ name: 'Zenith Bank' });
    expect(data!._entities[2].name).toBe('Cable TV');
    expect(data!._entities[2].bills.length).toBeGreaterThan(0);
    expect(data!._entities[3]).toBeNull();
  });

  it('answers each reference of a batch on its own: a malformed one fails alone, with BAD_USER_INPUT', async () => {
    const { query } = await startApp();
    const { data, errors } = await query(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName } ... on Bank { name } } }',
      {
        r: [
          { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' },
          { __typename: 'Account', accountNumber: 123456789, bankCode: '000023' },
          { __typename: 'NoSuchEntity', id: '1' },
          'not an object',
          { __typename: 'Bank', code: '000015' },
        ],
      },
    );
    expect(data!._entities).toEqual([{ accountName: 'ADAEZE CHIOMA OKONKWO' }, null, null, null, { name: 'Zenith Bank' }]);
    expect(errors!.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['_entities', 1], 'BAD_USER_INPUT'],
      [['_entities', 2], 'BAD_USER_INPUT'],
      [['_entities', 3], 'BAD_USER_INPUT'],
    ]);
    expect(errors![0]!.message).toContain('accountNumber');
  });

  it('resolves CollectionNotification references from the store', async () => {
    const { query, deliver } = await startApp();
    const body = notificationBody();
    expect((await deliver(body)).reply.responseCode).toBe('00');
    const { data } = await query(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on CollectionNotification { settlementId transactionAmount } } }',
      {
        r: [
          { __typename: 'CollectionNotification', settlementId: body.settlementId },
          { __typename: 'CollectionNotification', settlementId: 'none' },
        ],
      },
    );
    expect(data!._entities).toEqual([{ settlementId: body.settlementId, transactionAmount: '1500.00' }, null]);
  });

  it('refuses an Account reference with a malformed key before calling the bank', async () => {
    const app = await startApp();
    const { errors } = await app.query('query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName } } }', {
      r: [{ __typename: 'Account', accountNumber: '123', bankCode: '000023' }],
    });
    expect(errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(await bankCalls(app)).toBe(0);
  });
});
