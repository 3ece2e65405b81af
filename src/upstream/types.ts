/**
 * The domain's view of the bank: what each client returns, in our names. Only the modules in
 * `src/upstream/` know the bank's field names, paths and headers; everything else speaks these.
 */

/** An account holder as the bank's name enquiry returns it (ops 1 and 13). */
export interface AccountRecord {
  accountNumber: string;
  bankCode: string;
  accountName: string;
  /** `null` where the bank gave an empty value. */
  bvn: string | null;
  transactionReference: string | null;
}

/** One entry of the bank list (op 2). */
export interface BankRecord {
  code: string;
  name: string;
}

/** BVN details (op 3). The bank does not document the fields, so the whole body is kept in `raw`. */
export interface BvnRecord {
  bvn: string;
  firstName: string | null;
  lastName: string | null;
  middleName: string | null;
  dateOfBirth: string | null;
  phoneNumber: string | null;
  raw: Record<string, unknown>;
}

/** A bill category (op 6). */
export interface BillCategoryRecord {
  id: number;
  name: string;
  listOrder: string | null;
}

/** A bill assigned to a category (op 7); fields undocumented, so the bank's object is kept whole. */
export interface BillRecord {
  id: string | null;
  name: string | null;
  categoryId: number | null;
  raw: Record<string, unknown>;
}

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

export interface MerchantSessionRecord extends MerchantTokensRecord {
  user: MerchantUserRecord;
  merchant: MerchantRecord;
}

/** `{status, message}` answers of the wallet's password operations (ops 10, 11). */
export interface StatusMessageRecord {
  status: boolean;
  message: string | null;
}

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

/** Account area (ops 1-3). */
export interface AccountClient {
  /** Op 1, NIP name enquiry. Without `bankCode` the bank looks the account up among its own. */
  lookupAccount(input: { accountNumber: string; bankCode?: string | undefined }): Promise<AccountRecord>;
  /** Op 2, every bank NIP can reach. */
  listBanks(): Promise<BankRecord[]>;
  /** Op 3, BVN details. */
  lookupBvn(bvn: string): Promise<BvnRecord>;
}

/** Transaction area's OAuth 2.0 authorization-code flow (ops 4-5). */
export interface TransactionClient {
  /** Op 4: obtain an authorization code for `redirectUri`. */
  authorize(redirectUri: string): Promise<AuthorizationCodeRecord>;
  /** Op 5: exchange an authorization code for an access token. */
  exchangeCode(input: { code: string; redirectUri: string }): Promise<TransactionTokenRecord>;
}

/** Bill-payment area (ops 6-7). */
export interface BillingClient {
  listCategories(): Promise<BillCategoryRecord[]>;
  listBills(categoryId: number): Promise<BillRecord[]>;
}

/** Wallet-merchant authentication (ops 8-12). Credentials and tokens here are the caller's. */
export interface WalletClient {
  login(input: { email: string; password: string }): Promise<MerchantSessionRecord>;
  logout(tokens: MerchantTokensRecord): Promise<void>;
  forgotPassword(email: string): Promise<StatusMessageRecord>;
  resetPassword(input: { resetCode: string; password: string }): Promise<StatusMessageRecord>;
  refreshSession(refreshToken: string): Promise<MerchantTokensRecord>;
}

/** Posting area (op 13). */
export interface PostingClient {
  lookupAccount(input: { accountNumber: string; beneficiaryBank: string }): Promise<AccountRecord>;
}

/** Every area of the bank, as the resolvers reach it. */
export interface BankClients {
  account: AccountClient;
  transaction: TransactionClient;
  billing: BillingClient;
  wallet: WalletClient;
  posting: PostingClient;
}
