import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { composeServices } from '@apollo/composition';
import { ApolloGateway } from '@apollo/gateway';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { scrapeSum } from './helpers/metrics.ts';
import { startApolloGateway, startHiveGateway } from './helpers/router.ts';
import { bearer, serveJwks, TEST_ISSUER, TestIssuer } from './helpers/tokens.ts';

// Every gateway in front of the subgraph serves it: those that read the access directives
// (Apollo Router, Hive Gateway and Router, Cosmo) from its SDL, and @apollo/gateway, which refuses
// a supergraph with `for: SECURITY` features, from the SDL published without them. The subgraph
// enforces the same rules either way.

const SCREEN = '{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName bvn } }';
const PRINT_SCHEMA = join(import.meta.dirname, '..', 'scripts', 'print-schema.ts');

async function startGuarded(env: Record<string, string> = {}): Promise<{ app: TestApp; issuer: TestIssuer }> {
  const issuer = await TestIssuer.create();
  const jwks = await serveJwks(issuer);
  return { app: await startApp({ AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, ...env }), issuer };
}

async function publishedSdl(app: TestApp): Promise<string> {
  return (await app.query('{ _service { sdl } }')).data!._service.sdl;
}

describe('PUBLISH_ACCESS_DIRECTIVES', () => {
  it('leaves the directives and their imports out of _service and schema:print when false, and keeps enforcing them', async () => {
    const { app, issuer } = await startGuarded({ PUBLISH_ACCESS_DIRECTIVES: 'false' });
    const sdl = await publishedSdl(app);
    expect(sdl).not.toMatch(/@authenticated|@requiresScopes/);
    expect(sdl).toMatch(/import: \["@key", "@shareable", "@cost", "@listSize"\]/);
    const printed = execFileSync(process.execPath, [PRINT_SCHEMA], {
      encoding: 'utf8',
      env: { ...process.env, PUBLISH_ACCESS_DIRECTIVES: 'false' },
    });
    expect(printed).toBe(`${sdl.trim()}\n`);

    const { data, errors } = await app.query(SCREEN, undefined, bearer(await issuer.sign({ scope: 'accounts:read' })));
    expect(data!.account).toEqual({ accountName: 'ADAEZE CHIOMA OKONKWO', bvn: null });
    expect(errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['account', 'bvn'], 'UNAUTHORIZED_FIELD_OR_TYPE']]);
  });

  it('publishes them by default, and names a bad value', async () => {
    const { app } = await startGuarded();
    expect(await publishedSdl(app)).toContain('bvn: String @authenticated @requiresScopes(scopes: [["kyc:read"]])');
    const refused = (() => {
      try {
        execFileSync(process.execPath, [PRINT_SCHEMA], {
          encoding: 'utf8',
          stdio: 'pipe',
          env: { ...process.env, PUBLISH_ACCESS_DIRECTIVES: 'no' },
        });
        return '';
      } catch (error) {
        return String((error as { stderr: string }).stderr);
      }
    })();
    expect(refused).toContain('PUBLISH_ACCESS_DIRECTIVES must be true or false, got "no"');
  });
});

describe('@apollo/gateway', () => {
  it('refuses the supergraph composed with the access directives, as it should', async () => {
    const { app } = await startGuarded();
    const { supergraphSdl } = composeServices([{ name: 'bank', url: app.graphqlUrl, typeDefs: parse(await publishedSdl(app)) }]);
    const gateway = new ApolloGateway({ supergraphSdl: supergraphSdl! });
    await expect(gateway.load()).rejects.toThrow(/for: SECURITY but is unsupported/);
  });

  it('composes and serves the subgraph published without them, the subgraph refusing what the token may not read', async () => {
    const { app, issuer } = await startGuarded({ PUBLISH_ACCESS_DIRECTIVES: 'false' });
    const gateway = await startApolloGateway([{ name: 'bank', url: app.graphqlUrl }]);
    const accounts = bearer(await issuer.sign({ scope: 'accounts:read' }));
    const routed = await gateway.query(SCREEN, undefined, accounts);
    expect(routed.data).toEqual({
      banks: expect.arrayContaining([{ code: '000023' }]),
      account: { accountName: 'ADAEZE CHIOMA OKONKWO', bvn: null },
    });
    expect(routed.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['account', 'bvn'], 'UNAUTHORIZED_FIELD_OR_TYPE']]);

    const kyc = await gateway.query(SCREEN, undefined, bearer(await issuer.sign({ scope: 'accounts:read kyc:read' })));
    expect(kyc.errors).toBeUndefined();
    expect(kyc.data!.account.bvn).toMatch(/^\d{11}$/);
  });
});

describe('Hive Gateway', () => {
  it('composes the subgraph with its access directives and enforces them itself, in front of the subgraph', async () => {
    const { app, issuer } = await startGuarded();
    const gateway = await startHiveGateway([{ name: 'bank', url: app.graphqlUrl, sdl: await publishedSdl(app) }]);
    expect(gateway.supergraph).toContain('@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", for: SECURITY)');

    const anonymous = await gateway.query(SCREEN);
    expect(anonymous.data?.banks).toEqual(expect.arrayContaining([{ code: '000023' }]));
    expect(anonymous.data?.account).toBeNull();
    expect(anonymous.errors?.map((e) => e.path)).toEqual([['account']]);

    const accounts = await gateway.query(SCREEN, undefined, bearer(await issuer.sign({ scope: 'accounts:read' })));
    expect(accounts.data?.account).toEqual({ accountName: 'ADAEZE CHIOMA OKONKWO', bvn: null });
    expect(accounts.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['account', 'bvn'], 'UNAUTHORIZED_FIELD_OR_TYPE']]);
    // Refused by the gateway itself: the subgraph never had to refuse anything.
    expect(await scrapeSum(app, 'graphql_authorization_refusals_total')).toBe(0);

    const kyc = await gateway.query(SCREEN, undefined, bearer(await issuer.sign({ scope: 'accounts:read kyc:read' })));
    expect(kyc.errors).toBeUndefined();
    expect(kyc.data!.account.bvn).toMatch(/^\d{11}$/);
  });
});
