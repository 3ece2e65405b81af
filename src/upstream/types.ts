/**
 * What each bank client offers. The records they return live in `src/domain/`; only the modules in
 * `src/upstream/` know the bank's field names, paths and headers, and everything else speaks those records.
 */
import type {
  AccountRecord,
  AuthorizationCodeRecord,
  BankRecord,
  BankTransactionRecord,
  BillCategoryRecord,
  BillRecord,
  BvnRecord,
  MerchantSessionRecord,
  MerchantTokensRecord,
  RepushRecord,
  StatusMessageRecord,
  TransactionTokenRecord,
} from '../domain/index.ts';
import type { Secret } from '../secret.ts';

/** Where each area of the bank lives (`spec/bank-api.md`'s placeholders). */
export interface BankUrls {
  /** `{base_url}`: account area and OAuth authorize (ops 1-4). */
  base: string;
  /** `{gateway_url}`: OAuth token exchange (op 5). */
  gateway: string;
  /** `{billing_url}`, including `/provipay/webapi` (ops 6-7). */
  billing: string;
  /** `{posting_url}`, including `/postingrest` (op 13). */
  posting: string;
  /** `{wallet_url}` (ops 8-12). */
  wallet: string;
  /**
   * `{collection_url}`: the collection service's API (ops 15-17, `BANK_COLLECTION_URL`); undefined
   * only where confirmation is off and none was given.
   */
  collection?: string | undefined;
}

/** The credentials the subgraph itself presents to the bank, and the webhook's shared secret. */
export interface BankCredentials {
  apiToken: Secret;
  username: string;
  password: Secret;
  billingUsername: string;
  billingPassword: Secret;
  postingUsername: string;
  postingPassword: Secret;
  oauthClientId: string;
  oauthClientSecret: Secret;
}

/**
 * What our calls to the bank's collection service carry: the pair the bank signs its deliveries
 * with (`WEBHOOK_CLIENT_ID` and the current `WEBHOOK_CLIENT_SECRET`), which it checks ours with too.
 */
export interface CollectionCredentials {
  clientId: string;
  clientSecret: Secret;
  /** `WEBHOOK_CLIENT_SECRET_PREVIOUS`: during a rotation, signs a call the bank refused with 401 under the current one. */
  previousSecret?: Secret | undefined;
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

/**
 * The bank's collection service (ops 15-17 of its collection API). A verify answers the bank's record
 * or `null` for its documented not-found answer, and throws an UpstreamError for anything else (an
 * error envelope, an unreadable answer, a record about another transfer): only those two are verdicts.
 */
export interface CollectionClient {
  /** Op 15: the transfer the bank holds under `sessionId`; `null` when it answers that it knows none. */
  verifyBySessionId(sessionId: string): Promise<BankTransactionRecord | null>;
  /** Op 16: the transfer the bank holds under `settlementId`; `null` when it answers that it knows none. */
  verifyBySettlementId(settlementId: string): Promise<BankTransactionRecord | null>;
  /**
   * Op 17: asks the bank to send a transfer's notification to the webhook again (either id may be
   * left out, not both). Sent once: after a time-out the bank may have queued it, so it is never retried.
   */
  repush(ids: { settlementId?: string | undefined; sessionId?: string | undefined }): Promise<RepushRecord>;
}

/** Every area of the bank, as the resolvers reach it. */
export interface BankClients {
  account: AccountClient;
  transaction: TransactionClient;
  billing: BillingClient;
  wallet: WalletClient;
  posting: PostingClient;
  collection: CollectionClient;
}
