// The bank-time reader lives in domain/, where the bank clients read the same times; kept here for the webhook's imports.
export { readBankTime } from '../domain/bank-time.ts';
