/** What the bank's account, bank-list, BVN and bill operations return, in our names. */

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
