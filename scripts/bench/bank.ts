// The bank's side of the webhook, for the load process: signed headers, notification bodies, and
// reading the reply code. Kept apart from test/helpers/app.ts, which needs vitest to load.
import { request } from 'undici';
import { signatureFor } from '../../src/collection/signature.ts';
import { sandboxCredentials } from '../../src/sandbox/credentials.ts';

export const WEBHOOK_PATH = '/webhooks/collection';

/** The headers the bank's collection service sends, signed with the sandbox's webhook credentials. */
export function signedHeaders(): Record<string, string> {
  const clientId = sandboxCredentials.webhookClientId;
  return {
    'content-type': 'application/json',
    'client-id': clientId,
    'x-auth-signature': signatureFor(clientId, sandboxCredentials.webhookClientSecret),
  };
}

/**
 * Makes valid notification bodies (the shape of test/helpers/app.ts's notificationBody), each with
 * a settlementId and sessionId never used before: the process's start time keeps ids of separate
 * load processes apart, the counter keeps one process's apart.
 */
export function createNotificationBodies(): () => { settlementId: string; body: string } {
  const stamp = `${Date.now()}${process.pid}`;
  let sequence = 0;
  return () => {
    sequence += 1;
    const settlementId = `${stamp}${String(sequence).padStart(9, '0')}`;
    const body = JSON.stringify({
      sessionId: `0901102211${stamp}${sequence}`,
      accountNumber: '0123456789',
      tranRemarks: `Bench payment ${sequence}`,
      transactionAmount: '1500.00',
      settledAmount: '1489.25',
      feeAmount: '10.00',
      vatAmount: '0.75',
      currency: 'NGN',
      initiationTranRef: '',
      settlementId,
      sourceAccountNumber: '0011223344',
      sourceAccountName: 'CHUKWUEMEKA OBI',
      sourceBankName: 'GTBank',
      channelId: '1',
      tranDateTime: '2026-11-22 14:05:09',
    });
    return { settlementId, body };
  };
}

/** Names a webhook reply: its responseCode ("00" … "03"), or what was wrong with it. */
export function webhookOutcome(status: number, body: string): string {
  if (status !== 200) return `http ${status}`;
  try {
    const code: unknown = JSON.parse(body)?.responseCode;
    return typeof code === 'string' ? code : 'no responseCode';
  } catch {
    return 'unreadable reply';
  }
}

/** Posts one body to the webhook as the bank would; resolves to the reply's outcome. */
export async function deliver(baseUrl: string, body: string): Promise<string> {
  const response = await request(`${baseUrl}${WEBHOOK_PATH}`, { method: 'POST', headers: signedHeaders(), body });
  return webhookOutcome(response.statusCode, await response.body.text());
}
