import { createHash, timingSafeEqual } from 'node:crypto';
import type { WebhookCredentials } from '../config.ts';

/** The `X-Auth-Signature` the bank sends: upper-case hex SHA-512 of `<Client-Id>:<secret>`. */
export function signatureFor(clientId: string, secret: string): string {
  return createHash('sha512').update(`${clientId}:${secret}`, 'utf8').digest('hex').toUpperCase();
}

/**
 * Whether a delivery carries our Client-Id and the signature made from our id and secret. Both
 * are compared in constant time and both always run, so timing tells nothing about which failed.
 */
export function verifySignature(
  headers: { clientId: string | undefined; signature: string | undefined },
  expected: WebhookCredentials,
): boolean {
  const { clientId = '', signature = '' } = headers;
  const expectedSignature = signatureFor(expected.clientId, expected.clientSecret.reveal());
  const idMatches = sameText(clientId, expected.clientId);
  // The bank documents upper case; lower case is accepted too.
  const signatureMatches = sameText(signature.toUpperCase(), expectedSignature);
  return clientId !== '' && signature !== '' && idMatches && signatureMatches;
}

/** Constant-time equality of any two strings: equal-length digests, so length neither leaks nor throws. */
function sameText(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
