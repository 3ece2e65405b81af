/**
 * What each bank client offers. The records they return live in `src/domain/`; only the modules in
 * `src/upstream/` know the bank's field names, paths and headers, and everything else speaks those records.
 */
import type {
  AccountRecord,
  AuthorizationCodeRecord,
  BankRecord,
  BillCategoryRecord,
  BillRecord,
  BvnRecord,
  MerchantSessionRecord,
  MerchantTokensRecord,
  StatusMessageRecord,
  TransactionTokenRecord,
} from '../domain/index.ts';

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
