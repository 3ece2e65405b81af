/**
 * Bill-payment area (`{billing_url}`, which ends in `/provipay/webapi`; ops 6-7). HTTP Basic on
 * every call, built from the UTF-8 bytes so any character in the username or password works.
 */
import type { BankCredentials, BankUrls } from './types.ts';
import { basicAuthorization, bankUrl, type BankHttp } from './http.ts';
import {
  arrayBody,
  invalidAnswer,
  isObject,
  optionalInteger,
  optionalString,
  optionalText,
  requiredString,
  type JsonObject,
} from './read.ts';
import type { BillCategoryRecord, BillRecord } from '../domain/index.ts';
import type { BillingClient } from './types.ts';

/** Creates the bill-payment client (ops 6-7). */
export function createBillingClient(http: BankHttp, urls: BankUrls, credentials: BankCredentials): BillingClient {
  const headers = (): Record<string, string> => ({
    authorization: basicAuthorization(credentials.billingUsername, credentials.billingPassword.reveal()),
  });
  // Failure bodies are not shown for this area, so none is read: the status alone gives the code.
  const common = { area: 'billing', method: 'GET', supplier: 'subgraph', idempotent: true } as const;

  return {
    listCategories() {
      return http.call({
        ...common,
        operation: 'listCategories',
        url: bankUrl(urls.billing, '/categories'),
        headers: headers(),
        read: ({ body }) => listOf(body, 'categories').map(readCategory),
      });
    },

    listBills(categoryId) {
      return http.call({
        ...common,
        operation: 'listBills',
        url: bankUrl(urls.billing, `/bill/assigned/byCategoryId/${encodeURIComponent(String(categoryId))}`),
        headers: headers(),
        read: ({ body }) => listOf(body, 'bills').map(readBill),
      });
    },
  };
}

/** The documented bare JSON array; a `data` wrapper is accepted too, as such APIs often add one. */
function listOf(body: unknown, what: string): JsonObject[] {
  const list = isObject(body) && Array.isArray(body.data) ? body.data : arrayBody(body, what);
  return list.map((entry) => {
    if (!isObject(entry)) throw invalidAnswer(`${what}[] is not an object`);
    return entry;
  });
}

function readCategory(entry: JsonObject): BillCategoryRecord {
  const id = optionalInteger(entry, 'category_id');
  if (id === null) throw invalidAnswer('category.category_id is not an integer');
  return {
    id,
    name: requiredString(entry, 'name', 'category'),
    // Documented as a string; a number is taken as its text rather than refused.
    listOrder: optionalText(entry, 'list_order'),
  };
}

/**
 * Bill fields are not shown in the spec. We read the usual spellings of an id, a name and a
 * category, and keep the bank's object whole as `raw`, so nothing is lost whatever it sends.
 */
function readBill(entry: JsonObject): BillRecord {
  return {
    id: optionalText(entry, 'id', 'bill_id', 'billId', 'biller_id', 'billerId'),
    name: optionalString(entry, 'name', 'bill_name', 'billName', 'biller_name', 'billerName'),
    categoryId: optionalInteger(entry, 'category_id', 'categoryId'),
    raw: entry,
  };
}
