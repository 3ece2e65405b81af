import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { PRODUCTION_SANDBOX } from './helpers/production.ts';

const STUDIO = 'https://studio.apollographql.com';

// Apollo Studio's Explorer (and any browser app on another origin) calls /graphql cross-origin.
describe('CORS on /graphql', () => {
  it('answers a preflight from another origin', async () => {
    const { graphqlUrl } = await startApp();
    const response = await request(graphqlUrl, {
      method: 'OPTIONS',
      headers: { origin: STUDIO, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    await response.body.dump();
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(STUDIO);
    expect(String(response.headers['access-control-allow-methods'])).toContain('POST');
  });

  it('allows the cross-origin request itself', async () => {
    const { graphqlUrl } = await startApp();
    const response = await request(graphqlUrl, {
      method: 'POST',
      headers: { origin: STUDIO, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ bank(code: "000023") { name } }' }),
    });
    expect(response.headers['access-control-allow-origin']).toBe(STUDIO);
    expect(await response.body.json()).toEqual({ data: { bank: { name: 'Providus Bank' } } });
  });

  it('sends no CORS headers from the webhook, which serves the bank and never a browser page', async () => {
    const { baseUrl } = await startApp();
    const response = await request(`${baseUrl}/webhooks/collection`, {
      method: 'POST',
      headers: { ...signedHeaders(), origin: STUDIO, 'content-type': 'application/json' },
      body: JSON.stringify(notificationBody()),
    });
    expect(await response.body.json()).toMatchObject({ responseCode: '00' });
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS header, preflight included, on any route but /graphql: the webhook, health and metrics', async () => {
    const { baseUrl, graphqlUrl } = await startApp();
    const preflightHeaders = { origin: STUDIO, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };
    for (const path of ['/webhooks/collection', '/v1/webhook', '/health/live', '/health/ready', '/metrics', '/graphqlx', '/graphql/x']) {
      const preflight = await request(`${baseUrl}${path}`, { method: 'OPTIONS', headers: preflightHeaders });
      await preflight.body.dump();
      expect(preflight.statusCode, path).toBe(404);
      expect(
        Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-')),
        path,
      ).toEqual([]);
    }
    for (const path of ['/health/live', '/metrics']) {
      const read = await request(`${baseUrl}${path}`, { headers: { origin: STUDIO } });
      await read.body.dump();
      expect(read.statusCode, path).toBe(200);
      expect(
        Object.keys(read.headers).filter((name) => name.startsWith('access-control-')),
        path,
      ).toEqual([]);
    }
    // /graphql still answers its own, with a query string too.
    const own = await request(`${graphqlUrl}?op=x`, { method: 'OPTIONS', headers: preflightHeaders });
    await own.body.dump();
    expect(own.headers['access-control-allow-origin']).toBe(STUDIO);
  });

  const preflight = async (graphqlUrl: string, origin: string) => {
    const response = await request(graphqlUrl, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    await response.body.dump();
    return response.headers['access-control-allow-origin'];
  };

  it('answers only the origins CORS_ORIGINS lists, when it is set', async () => {
    const { graphqlUrl, query } = await startApp({ CORS_ORIGINS: `${STUDIO},http://localhost:3000` });
    expect(await preflight(graphqlUrl, 'http://localhost:3000')).toBe('http://localhost:3000');
    expect(await preflight(graphqlUrl, STUDIO)).toBe(STUDIO);
    expect(await preflight(graphqlUrl, 'https://evil.example')).toBeUndefined();
    const response = await request(graphqlUrl, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ bank(code: "000023") { name } }' }),
    });
    await response.body.dump();
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    // Requests without an Origin (the router, curl) are not CORS and are served as ever.
    expect((await query('{ bank(code: "000023") { name } }')).data).toEqual({ bank: { name: 'Providus Bank' } });
  });

  it('answers no origin in production when CORS_ORIGINS is unset, and the listed ones when it is set', async () => {
    const closed = await startApp(PRODUCTION_SANDBOX);
    expect(await preflight(closed.graphqlUrl, STUDIO)).toBeUndefined();
    expect(await preflight(closed.graphqlUrl, 'http://localhost:3000')).toBeUndefined();
    const listed = await startApp({ ...PRODUCTION_SANDBOX, CORS_ORIGINS: STUDIO });
    expect(await preflight(listed.graphqlUrl, STUDIO)).toBe(STUDIO);
  });
});
