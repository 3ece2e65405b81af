/** The transaction area's OAuth 2.0 records (ops 4-5), in our names. */

/** An OAuth authorization code (op 4) and the redirect URI it was issued for. */
export interface AuthorizationCodeRecord {
  code: string;
  redirectUri: string;
}

/** An OAuth 2.0 token response (op 5, RFC 6749 §5.1). */
export interface TransactionTokenRecord {
  accessToken: string;
  tokenType: string | null;
  expiresIn: number | null;
  refreshToken: string | null;
  scope: string | null;
}
