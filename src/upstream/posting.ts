/**
 * Posting area (`{posting_url}`, which ends in `/postingrest`; op 13): NIP name enquiry with the
 * credentials in the JSON body and no other credential.
 */
import type { BankCredentials, BankUrls } from './types.ts';
import { readAccountRecord, readResponseCodeFailure } from './account-record.ts';
import { bankUrl, type BankHttp } from './http.ts';
import type { PostingClient } from './types.ts';

/** Creates the posting-area client (op 13). */
export function createPostingClient(http: BankHttp, urls: BankUrls, credentials: BankCredentials): PostingClient {
  return {
    lookupAccount({ accountNumber, beneficiaryBank }) {
      const body = JSON.stringify({
        accountNumber,
        beneficiaryBank,
        userName: credentials.postingUsername,
        password: credentials.postingPassword.reveal(),
      });
      return http.call({
        area: 'posting',
        operation: 'lookupAccount',
        method: 'POST',
        url: bankUrl(urls.posting, '/GetNIPAccount'),
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body,
        supplier: 'subgraph',
        // A POST, but a lookup: safe to retry on a transient fault.
        idempotent: true,
        // 400/401/500 carry `{requestSuccessful:false, responseCode:"11", responseMessage}`.
        readFailure: readResponseCodeFailure,
        read: ({ body: answer }) => readAccountRecord(answer, 'account record', beneficiaryBank),
      });
    },
  };
}
