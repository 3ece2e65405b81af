import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';

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
});
