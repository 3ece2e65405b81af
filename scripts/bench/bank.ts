// The bank's side of the webhook, for the load processes: signed headers, notification bodies, and
// reading the reply's code. Kept apart from test/helpers, which need vitest to load.
import { request } from 'undici';
import { collectionHeaders, collectionNotification } from '../collection-notifier.ts';

export const WEBHOOK_PATH = '/webhooks/collection';
/** The headers the bank's collection service sends, signed with the sandbox's credentials. */
export const signedHeaders = (): Record<string, string> => collectionHeaders();
/** The sandbox's accounts: the fill gives each of them 8 % of its notifications, 1,000 others the rest. */
export const BUSY_ACCOUNTS = ['0123456789', '1234567890', '0011223344', '2233445566', '9876543210'] as const;
/** An account of 9 digits: a delivery to it is refused for its content (02), and kept in the quarantine. */
export const REFUSED_ACCOUNT = '012345678';
/** The bank's zone, West Africa Time, is UTC+1 all year. */
const WAT_MS = 3_600_000;

/**
 * Valid bodies, each with a settlementId never used before: the process's start time keeps the ids
 * of separate load processes apart, the counter those of one.
 */
export function createNotificationBodies(accountNumber?: string): () => { settlementId: string; body: string } {
  const stamp = `${Date.now()}${process.pid}`;
  let sequence = 0;
  return () => {
    sequence += 1;
    const settlementId = `${stamp}${String(sequence).padStart(9, '0')}`;
    const fields = { settlementId, sessionId: `0901102211${stamp}${sequence}`, tranRemarks: `Bench payment ${sequence}`, accountNumber };
    return { settlementId, body: JSON.stringify(collectionNotification(fields)) };
  };
}

/**
 * The transfer as the bank holds it for a settlementId that `createNotificationBodies()` made (the
 * default account): the same fields, for the bench's collection stand-in to answer op 16 with.
 * Undefined for an id of another shape.
 */
export function heldTransfer(settlementId: string): Record<string, string> | undefined {
  const made = /^(\d+)(\d{9})$/.exec(settlementId);
  if (!made) return undefined;
  const [, stamp, padded] = made;
  const sequence = Number(padded);
  return collectionNotification({ settlementId, sessionId: `0901102211${stamp}${sequence}`, tranRemarks: `Bench payment ${sequence}` });
}

/** The settlementId of the fill's `index`th notification: 15 digits from 9, apart from every other body's. */
export const fillSettlementId = (index: number): string => `9${String(index).padStart(14, '0')}`;

/** The account of the fill's `index`th notification. */
export const fillAccount = (index: number): string =>
  index % 10 < 4 ? BUSY_ACCOUNTS[Math.floor(index / 10) % 5]! : `20${String((index * 7919) % 995).padStart(8, '0')}`;

/** The fill's `index`th body: its amount varied, its bank time `startMs + index × stepMs`. */
export function fillBody(index: number, startMs: number, stepMs: number): string {
  const kobo = ((index * 7907) % 20_000_000) + 1_100;
  return JSON.stringify(
    collectionNotification({
      settlementId: fillSettlementId(index),
      sessionId: `100004${String(index).padStart(24, '0')}`,
      accountNumber: fillAccount(index),
      transactionAmount: `${Math.floor(kobo / 100)}.${String(kobo % 100).padStart(2, '0')}`,
      tranRemarks: `Payment for order ${index % 100_000}`,
      tranDateTime: new Date(startMs + index * stepMs + WAT_MS).toISOString().slice(0, 19).replace('T', ' '),
    }),
  );
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

/** Posts one body as the bank would; resolves to the reply's outcome. */
export async function deliver(baseUrl: string, body: string): Promise<string> {
  const response = await request(`${baseUrl}${WEBHOOK_PATH}`, { method: 'POST', headers: signedHeaders(), body });
  return webhookOutcome(response.statusCode, await response.body.text());
}
