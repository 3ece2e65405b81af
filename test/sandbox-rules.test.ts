import { getIntrospectionQuery } from 'graphql';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { liveBankEnv, startCountingBank } from './helpers/counting-bank.ts';
import { PRODUCTION_SANDBOX, productionHeaders } from './helpers/production.ts';

// Every default that opens a door applies to the in-process sandbox outside production alone; a
// live bank gets the production rules whatever NODE_ENV says.

const EVIL = 'https://evil.example';

async function startLive(nodeEnv: string | undefined): Promise<TestApp> {
  const bank = await startCountingBank();
  return startApp({ ...liveBankEnv(bank.url), ...(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }) });
}

type Result = { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** One operation over graphql-ws: its single result, or the errors of its `error` message. */
async function overWebSocket(app: TestApp, query: string, headers: Record<string, string> = {}): Promise<Result> {
  const results = app.wsClient({ headers }).iterate({ query });
  try {
    const { value } = await results.next();
    return value as Result;
  } catch (errors) {
    return { errors: errors as Result['errors'] };
  } finally {
    await results.return?.();
  }
}

const INTROSPECTION = getIntrospectionQuery();

describe.each([['staging'], ['development'], [undefined]])('a live bank with NODE_ENV=%s', (nodeEnv) => {
  it('answers no anonymous caller, grants no foreign origin, and keeps introspection off on both transports', async () => {
    const app = await startLive(nodeEnv);
    const anonymous = await app.query('{ banks { code } collectionNotifications { nodes { settlementId } } }');
    expect(anonymous.data?.banks.length).toBeGreaterThan(0);
    expect(anonymous.data?.collectionNotifications).toBeNull();
    expect(anonymous.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);

    const cors = await request(app.graphqlUrl, {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    await cors.body.dump();
    expect(cors.headers['access-control-allow-origin']).toBeUndefined();

    const headers = await productionHeaders();
    const http = await app.query(INTROSPECTION, undefined, headers);
    expect(http.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(http.data).toBeUndefined();
    const ws = await overWebSocket(app, INTROSPECTION, headers);
    expect(ws.errors?.[0]?.message).toMatch(/introspection has been disabled/);
    expect(ws.data).toBeUndefined();
    // The router reads the SDL through _service, which stays answered.
    expect((await app.query('{ _service { sdl } }')).data?._service.sdl).toContain('type Query');
  });
});

describe('introspection', () => {
  it('is answered over HTTP and graphql-ws under the sandbox rules', async () => {
    const app = await startApp();
    expect((await app.query(INTROSPECTION)).data?.__schema.queryType.name).toBe('Query');
    expect((await overWebSocket(app, '{ __type(name: "Account") { fields { name } } }')).data?.__type.fields).toContainEqual({
      name: 'bvn',
    });
  });

  it('is refused over HTTP and graphql-ws alike in production, on the sandbox bank too', async () => {
    const headers = await productionHeaders();
    const app = await startApp(PRODUCTION_SANDBOX, {}, { headers });
    for (const query of [INTROSPECTION, '{ __type(name: "Account") { name } }']) {
      expect((await app.query(query)).errors?.[0]?.extensions?.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
      expect((await overWebSocket(app, query, headers)).errors?.[0]?.message, query).toMatch(/introspection has been disabled/);
    }
    expect((await app.query('{ banks { code } }')).errors).toBeUndefined();
  });
});
