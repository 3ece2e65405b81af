import { collectionSignature } from '../domain/collection-signature.ts';
import { Secret } from '../secret.ts';

/** What the bank signs its deliveries with (`WEBHOOK_CLIENT_ID`, `WEBHOOK_CLIENT_SECRET` and, during a rotation, `_PREVIOUS`). */
export interface WebhookCredentials {
  clientId: string;
  clientSecret: Secret;
  /** `WEBHOOK_CLIENT_SECRET_PREVIOUS`: during a rotation, the old secret, accepted beside the new one. */
  previousSecret?: Secret | undefined;
}

/** The `X-Auth-Signature` the bank sends: upper-case hex SHA-512 of `<Client-Id>:<secret>`. */
export const signatureFor = collectionSignature;

/** Which configured secret a delivery was signed with: the current one, or the previous during a rotation. */
export type SignedWith = 'current' | 'previous';

/** What a delivery must carry, worked out once from the webhook credentials. */
export interface ExpectedSignature {
  clientId: Secret;
  /** The upper-case signature made from our Client-Id and secret; a Secret, since it opens the webhook. */
  signature: Secret;
  /** The same from the previous secret, while `WEBHOOK_CLIENT_SECRET_PREVIOUS` is set. */
  previousSignature: Secret | undefined;
}

/** The Client-Id and signatures every delivery must carry, computed once rather than per request. */
export function expectedSignature(credentials: WebhookCredentials): ExpectedSignature {
  const sign = (secret: Secret) => new Secret(signatureFor(credentials.clientId, secret.reveal()));
  return {
    clientId: new Secret(credentials.clientId),
    signature: sign(credentials.clientSecret),
    previousSignature: credentials.previousSecret && sign(credentials.previousSecret),
  };
}

/**
 * Which secret signed a delivery carrying our Client-Id, or `undefined` when it is not ours. Every
 * comparison runs, each in constant time, whichever fails or matches first, so timing tells nothing
 * about which part was wrong or which secret matched (only whether a rotation is under way, which
 * is no secret).
 */
export function verifySignature(
  headers: { clientId: string | undefined; signature: string | undefined },
  expected: ExpectedSignature,
): SignedWith | undefined {
  const { clientId = '', signature = '' } = headers;
  const idMatches = expected.clientId.equals(clientId);
  // The bank documents upper case; lower case is accepted too.
  const given = signature.toUpperCase();
  const current = expected.signature.equals(given);
  // During a rotation both always run; outside one there is nothing else to compare with.
  const previous = expected.previousSignature !== undefined && expected.previousSignature.equals(given);
  if (clientId === '' || signature === '' || !idMatches) return undefined;
  return current ? 'current' : previous ? 'previous' : undefined;
}
