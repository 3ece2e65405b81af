import { createHash } from 'node:crypto';
import type { WebhookCredentials } from '../config.ts';
import { Secret } from '../secret.ts';

/** The `X-Auth-Signature` the bank sends: upper-case hex SHA-512 of `<Client-Id>:<secret>`. */
export function signatureFor(clientId: string, secret: string): string {
  return createHash('sha512').update(`${clientId}:${secret}`, 'utf8').digest('hex').toUpperCase();
}

/** What a delivery must carry, worked out once from the webhook credentials. */
export interface ExpectedSignature {
  clientId: Secret;
  /** The upper-case signature made from our Client-Id and secret; a Secret, since it opens the webhook. */
  signature: Secret;
}

/** The Client-Id and signature every delivery must carry, computed once rather than per request. */
export function expectedSignature(credentials: WebhookCredentials): ExpectedSignature {
  return {
    clientId: new Secret(credentials.clientId),
    signature: new Secret(signatureFor(credentials.clientId, credentials.clientSecret.reveal())),
  };
}

/**
 * Whether a delivery carries our Client-Id and the signature made from our id and secret. Both
 * are compared in constant time and both always run, so timing tells nothing about which failed.
 */
export function verifySignature(
  headers: { clientId: string | undefined; signature: string | undefined },
  expected: ExpectedSignature,
): boolean {
  const { clientId = '', signature = '' } = headers;
  const idMatches = expected.clientId.equals(clientId);
  // The bank documents upper case; lower case is accepted too.
  const signatureMatches = expected.signature.equals(signature.toUpperCase());
  return clientId !== '' && signature !== '' && idMatches && signatureMatches;
}
