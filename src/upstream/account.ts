/**
 * Account area (`{base_url}`, ops 1-3): NIP name enquiry, the bank list and BVN details. Token
 * authentication: `Authorization` holds the token as configured, with `Username` and `Password`.
 */
import type { BankCredentials, BankUrls } from './types.ts';
import { readAccountRecord, readResponseCodeFailure, requireApproved } from './account-record.ts';
import { bankUrl, type BankHttp } from './http.ts';
import { arrayBody, invalidAnswer, isObject, objectBody, optionalString, requiredString, type JsonObject } from './read.ts';
import type { BankRecord, BvnRecord } from '../domain/index.ts';
import type { AccountClient } from './types.ts';

/** Creates the account-area client (ops 1-3). */
export function createAccountClient(http: BankHttp, urls: BankUrls, credentials: BankCredentials): AccountClient {
  // Read per call: the Secret is revealed only when the header goes on the wire.
  const headers = (): Record<string, string> => ({
    // The spec says the header holds the token; no scheme is added.
    authorization: credentials.apiToken.reveal(),
    username: credentials.username,
    password: credentials.password.reveal(),
  });
  // Reads only: safe to retry on a transient fault.
  const common = { area: 'account', method: 'GET', supplier: 'subgraph', idempotent: true, readFailure: readResponseCodeFailure } as const;

  return {
    lookupAccount({ accountNumber, bankCode }) {
      return http.call({
        ...common,
        operation: 'lookupAccount',
        url: bankUrl(urls.base, '/account/NIP', { account_number: accountNumber, bank_code: bankCode }),
        headers: headers(),
        read: ({ body }) => readAccountRecord(body, 'account record', bankCode),
      });
    },

    listBanks() {
      return http.call({
        ...common,
        operation: 'listBanks',
        url: bankUrl(urls.base, '/v1/account/NIP/banks'),
        headers: headers(),
        read: ({ body }) => readBankList(body),
      });
    },

    lookupBvn(bvn) {
      return http.call({
        ...common,
        operation: 'lookupBvn',
        url: bankUrl(urls.base, '/v1/account/bvn', { number: bvn }),
        headers: headers(),
        read: ({ body }) => readBvn(body, bvn),
      });
    },
  };
}

function readBankList(value: unknown): BankRecord[] {
  const body = objectBody(value, 'bank list');
  requireApproved(body, 'bank list');
  return arrayBody(body.banks, 'bank list.banks').map((entry) => {
    if (!isObject(entry)) throw invalidAnswer('bank list.banks[] is not an object');
    // Codes stay strings: they are numeric-looking with leading zeros ("000023").
    return { code: requiredString(entry, 'bankCode', 'bank'), name: requiredString(entry, 'bankName', 'bank') };
  });
}

/**
 * BVN details: the spec does not show the body. We accept the fields at the top level or under
 * `data`, in the spellings a NIBSS-style service uses, and keep the whole body as `raw`, so nothing
 * the bank sends is lost whatever its names.
 */
function readBvn(value: unknown, requested: string): BvnRecord {
  const body = objectBody(value, 'BVN details');
  requireApproved(body, 'BVN details');
  const fields: JsonObject = isObject(body.data) ? body.data : body;
  return {
    // An approved answer is about the BVN asked for, even if it does not repeat it.
    bvn: optionalString(fields, 'bvn', 'BVN') ?? requested,
    firstName: optionalString(fields, 'firstName', 'first_name', 'firstname'),
    lastName: optionalString(fields, 'lastName', 'last_name', 'lastname', 'surname'),
    middleName: optionalString(fields, 'middleName', 'middle_name', 'middlename'),
    dateOfBirth: optionalString(fields, 'dateOfBirth', 'date_of_birth', 'dob'),
    phoneNumber: optionalString(fields, 'phoneNumber', 'phone_number', 'phoneNumber1', 'phone'),
    raw: body,
  };
}
