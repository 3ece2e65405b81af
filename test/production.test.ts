import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { collectionHeaders } from '../scripts/collection-notifier.ts';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';
import { notificationBody, startApp } from './helpers/app.ts';
import { subscribersLive } from './helpers/metrics.ts';
import { PRODUCTION_SANDBOX, productionHeaders } from './helpers/production.ts';
import { capturingLogger } from './helpers/stores.ts';

const ownHeaders = () => collectionHeaders(PRODUCTION_SANDBOX.WEBHOOK_CLIENT_ID, PRODUCTION_SANDBOX.WEBHOOK_CLIENT_SECRET);

// What a production start refuses is for the configuration's unit tests; test/process.test.ts shows
// `npm start` exiting 1 with such a report.
describe('a production start fails closed', () => {
  it('on a sandbox chosen for a demo, refuses a delivery signed with the sandbox’s published credentials', async () => {
    const headers = await productionHeaders();
    const app = await startApp(PRODUCTION_SANDBOX, {}, { headers });
    const subscription = app.wsClient({ headers }).iterate({ query: 'subscription { incomingTransfer { settlementId } }' });
    const next = subscription.next();
    await subscribersLive(app, 1);
    const forged = notificationBody();
    const genuine = notificationBody();

    const refused = await app.deliver(
      forged,
      collectionHeaders(sandboxCredentials.webhookClientId, sandboxCredentials.webhookClientSecret),
    );
    expect(refused.reply).toMatchObject({ responseCode: '02', responseMessage: 'rejected transaction' });
    expect((await app.deliver(genuine, ownHeaders())).reply.responseCode).toBe('00');
    // The next event is the genuine one: the forged notification was never published.
    expect((await next).value?.data?.incomingTransfer?.settlementId).toBe(genuine.settlementId);

    const stored = await app.query('query($id: ID!) { collectionNotification(settlementId: $id) { settlementId } }', {
      id: forged.settlementId,
    });
    expect(stored.data).toEqual({ collectionNotification: null });
    await subscription.return?.();
  });

  it('accepts deliveries from every source only with WEBHOOK_ALLOWED_IPS=any, and warns at start why that is dangerous', async () => {
    const { logger, lines } = capturingLogger();
    const app = await startApp({ ...PRODUCTION_SANDBOX, WEBHOOK_ALLOWED_IPS: 'any' }, { logger });
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    const warning = entries.findIndex((entry) => entry.msg.startsWith('WEBHOOK_ALLOWED_IPS=any'));
    // Beside the first lines, which say what runs; at warn.
    expect(warning).toBeGreaterThan(0);
    expect(warning).toBeLessThan(3);
    expect(entries[warning]).toMatchObject({ level: 40, msg: expect.stringMatching(/every address.*same signature.*forged transfer/) });
    expect((await app.deliver(notificationBody(), ownHeaders())).reply.responseCode).toBe('00');
    // With an allow-list, nothing to warn of, and another address is refused.
    const listed = capturingLogger();
    const other = await startApp({ ...PRODUCTION_SANDBOX, WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' }, { logger: listed.logger });
    expect(listed.lines.map((line) => JSON.parse(line) as { level: number }).filter((entry) => entry.level >= 40)).toEqual([]);
    expect((await other.deliver(notificationBody(), ownHeaders())).reply.responseCode).toBe('02');
  });

  it('serves Apollo’s production landing page, not the Sandbox that would explore the graph', async () => {
    const { graphqlUrl } = await startApp(PRODUCTION_SANDBOX);
    const response = await request(graphqlUrl, { headers: { accept: 'text/html' } });
    const page = await response.body.text();
    expect(response.statusCode).toBe(200);
    // The landing page's own configuration, URI-encoded in the page: isProd turns the Sandbox off.
    expect(page).toContain('isProd%22%3Atrue');
  });
});
