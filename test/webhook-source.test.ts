import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders, startApp } from './helpers/app.ts';
import { scrapeSum } from './helpers/metrics.ts';
import { capturingLogger } from './helpers/stores.ts';

// WEBHOOK_ALLOWED_IPS: the signature is the same on every delivery, so where a delivery comes from
// is checked first. The test client connects from 127.0.0.1; X-Forwarded-For counts only through a
// proxy TRUST_PROXY names. A bad entry in either stops the start: the configuration's unit tests
// name it, and test/process.test.ts shows `npm start` exiting 1 on such a report.

async function start(env: Record<string, string>) {
  const { logger, lines } = capturingLogger();
  const app = await startApp(env, { logger });
  const stored = async (settlementId: unknown) =>
    (await app.query('query($id: ID!) { collectionNotification(settlementId: $id) { settlementId } }', { id: settlementId })).data!
      .collectionNotification;
  const refusals = () => scrapeSum(app, 'collection_webhook_replies_total', { reason: 'source_not_allowed' });
  const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...app, stored, refusals, logged };
}

/** Delivers a signed notification as if relayed for `forwardedFor` (when given). */
async function deliverFrom(app: Awaited<ReturnType<typeof start>>, forwardedFor?: string) {
  const body = notificationBody();
  const headers = forwardedFor === undefined ? signedHeaders() : { ...signedHeaders(), 'x-forwarded-for': forwardedFor };
  const { status, reply } = await app.deliver(body, headers);
  return { status, reply, body };
}

describe('the webhook source allow-list (WEBHOOK_ALLOWED_IPS)', () => {
  it('accepts a delivery from an allowed socket address', async () => {
    const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24, 127.0.0.1' });
    const { reply, body } = await deliverFrom(app);
    expect(reply.responseCode).toBe('00');
    expect(await app.stored(body.settlementId)).not.toBeNull();
  });

  it('replies 02 with HTTP 200 to a signed delivery from elsewhere, reading no body, stores nothing, logs the address and counts it', async () => {
    const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24, 2001:db8::/32' });
    const { status, reply, body } = await deliverFrom(app);
    expect(status).toBe(200);
    // Refused on its headers: the body is never read, so there is no sessionId to echo.
    expect(reply).toEqual({ requestSuccessful: true, sessionId: '', responseMessage: 'rejected transaction', responseCode: '02' });
    expect(await app.stored(body.settlementId)).toBeNull();
    expect(await app.refusals()).toBe(1);
    expect(app.logged()).toContainEqual(
      expect.objectContaining({ responseCode: '02', reason: 'source_not_allowed', sourceAddress: '127.0.0.1' }),
    );
  });

  it('checks the source before the signature', async () => {
    const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24' });
    const { reply } = await app.deliver(notificationBody(), { 'content-type': 'application/json' });
    expect(reply.responseCode).toBe('02');
    expect(await app.refusals()).toBe(1);
  });

  it('takes the address from X-Forwarded-For through a trusted proxy', async () => {
    const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24', TRUST_PROXY: '127.0.0.1' });
    const allowed = await deliverFrom(app, '203.0.113.7');
    expect(allowed.reply.responseCode).toBe('00');
    // The nearest untrusted hop counts: a spoofed address further left changes nothing.
    const refused = await deliverFrom(app, '203.0.113.7, 198.51.100.9');
    expect(refused.reply.responseCode).toBe('02');
    expect(app.logged()).toContainEqual(expect.objectContaining({ reason: 'source_not_allowed', sourceAddress: '198.51.100.9' }));
  });

  it('takes the address from X-Forwarded-For through a trusted hop count', async () => {
    const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24', TRUST_PROXY: '1' });
    expect((await deliverFrom(app, '203.0.113.7')).reply.responseCode).toBe('00');
  });

  it('ignores X-Forwarded-For from a proxy it does not trust: the socket address counts', async () => {
    for (const trust of [{}, { TRUST_PROXY: '10.0.0.0/8' }] as Record<string, string>[]) {
      const app = await start({ WEBHOOK_ALLOWED_IPS: '203.0.113.0/24', ...trust });
      const { reply, body } = await deliverFrom(app, '203.0.113.7');
      expect(reply.responseCode).toBe('02');
      expect(await app.stored(body.settlementId)).toBeNull();
      expect(app.logged()).toContainEqual(expect.objectContaining({ reason: 'source_not_allowed', sourceAddress: '127.0.0.1' }));
    }
  });

  it('accepts any source when unset', async () => {
    const app = await start({});
    expect((await deliverFrom(app, '198.51.100.9')).reply.responseCode).toBe('00');
  });
});
