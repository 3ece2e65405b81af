/** The wallet merchant's session, tokens and password answers (ops 8-12), in our names. */

/** The wallet user who signed in (op 8, `data`). Timestamps are ISO 8601 with offset, or null. */
export interface MerchantUserRecord {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  role: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** The merchant behind a wallet session (op 8, `merchant`). */
export interface MerchantRecord {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  businessName: string | null;
  businessType: string | null;
  mode: string | null;
  review: string | null;
  role: string | null;
  owner: boolean | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** Wallet session tokens, from and to the X-Access-Token / X-Refresh-Token headers. */
export interface MerchantTokensRecord {
  accessToken: string;
  refreshToken: string;
}

/** A signed-in wallet session: its tokens, the user and their merchant (op 8). */
export interface MerchantSessionRecord extends MerchantTokensRecord {
  user: MerchantUserRecord;
  merchant: MerchantRecord;
}

/** `{status, message}` answers of the wallet's password operations (ops 10, 11). */
export interface StatusMessageRecord {
  status: boolean;
  message: string | null;
}
