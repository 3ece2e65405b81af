import { createHash } from 'node:crypto';

/**
 * The collection service's `X-Auth-Signature`: upper-case hex SHA-512 of `<Client-Id>:<secret>`. The
 * bank signs its deliveries with it (op 14) and checks our calls to its collection service (ops
 * 15 to 17) with the same value, so the webhook and the bank client share this one digest.
 */
export function collectionSignature(clientId: string, secret: string): string {
  return createHash('sha512').update(`${clientId}:${secret}`, 'utf8').digest('hex').toUpperCase();
}
