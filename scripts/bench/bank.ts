// The bank's side of the webhook, for the load process: signed headers, notification bodies, and
// reading the reply code. Kept apart from test/helpers/app.ts, which needs vitest to load.
import { request } from 'undici';
import { collectionHeaders, collectionNotification } from '../collection-notifier.ts';

export const WEBHOOK_PATH = '/webhooks/collection';

/** The headers the bank's collection service sends, signed with the sandbox's webhook credentials. */
export const signedHeaders = (): Record<string, string> => collectionHeaders();

/**
 * Makes valid notification bodies (as the bank's collection service shapes them), each with
 * a settlementId and sessionId never used before: the process's start time keeps ids of separate
 * load processes apart, the counter keeps one process's apart.
 */
export function createNotificationBodies(accountNumber?: string): () => { settlementId: string; body: string } {
  const stamp = `${Date.now()}${process.pid}`;
  let sequence = 0;
  return () => {
    sequence += 1;
    const settlementId = `${stamp}${String(sequence).padStart(9, '0')}`;
    const body = JSON.stringify(
      collectionNotification({ settlementId, sessionId: `0901102211${stamp}${sequence}`, tranRemarks: `Bench payment ${sequence}`, accountNumber }),
    );
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
