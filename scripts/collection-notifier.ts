import { createHash } from 'node:crypto';
import { sandboxCredentials } from '../src/sandbox/credentials.ts';

/**
 * The bank's side of op 14: how its collection service shapes and signs a notification. The app
 * never uses this; the simulator, the bench and the tests do, so all three speak like the bank.
 */

/** The fields of one notification a caller usually picks; the rest are realistic defaults. */
export interface NotificationChoice {
  settlementId: string;
  sessionId: string;
  accountNumber?: string;
  /** Exact decimal text, as the bank sends amounts. */
  transactionAmount?: string;
  tranRemarks?: string;
  /** Bank local time without an offset, `YYYY-MM-DD HH:MM:SS`. */
  tranDateTime?: string;
}

/** A collection notification body as the bank sends it (every documented field present). */
export function collectionNotification(choice: NotificationChoice): Record<string, string> {
  const amount = choice.transactionAmount ?? '1500.00';
  return {
    sessionId: choice.sessionId,
    accountNumber: choice.accountNumber ?? '0123456789',
    tranRemarks: choice.tranRemarks ?? 'Payment for order',
    transactionAmount: amount,
    settledAmount: amount,
    feeAmount: '0.00',
    vatAmount: '0.00',
    currency: 'NGN',
    initiationTranRef: '',
    settlementId: choice.settlementId,
    sourceAccountNumber: '0011223344',
    sourceAccountName: 'CHUKWUEMEKA OBI',
    sourceBankName: 'GTBank',
    channelId: '1',
    tranDateTime: choice.tranDateTime ?? '2026-11-22 14:05:09',
  };
}

/**
 * The headers the collection service sends: Client-Id and X-Auth-Signature, the upper-case hex
 * SHA-512 of `<Client-Id>:<secret>`. Signed here, not with the webhook's code, so a bug in our
 * verifier cannot hide behind the same bug in the bank's stand-in.
 */
export function collectionHeaders(
  clientId: string = sandboxCredentials.webhookClientId,
  secret: string = sandboxCredentials.webhookClientSecret,
): Record<string, string> {
  const signature = createHash('sha512').update(`${clientId}:${secret}`, 'utf8').digest('hex').toUpperCase();
  return { 'content-type': 'application/json', 'client-id': clientId, 'x-auth-signature': signature };
}
