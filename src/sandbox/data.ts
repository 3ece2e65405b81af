/**
 * The sandbox bank's demo data. The README and tests name these values, so change them only together.
 * Nothing here is mutated: state that changes (passwords, sessions, codes) lives per sandbox instance.
 */

export interface SandboxBank {
  /** 6-digit NIP institution code. */
  bankCode: string;
  bankName: string;
}

/** Banks reachable over NIP (op 2), ordered by code. */
export const sandboxBanks: readonly SandboxBank[] = [
  { bankCode: '000001', bankName: 'Sterling Bank' },
  { bankCode: '000002', bankName: 'Keystone Bank' },
  { bankCode: '000003', bankName: 'FCMB' },
  { bankCode: '000004', bankName: 'United Bank for Africa' },
  { bankCode: '000005', bankName: 'Access Bank (Diamond)' },
  { bankCode: '000006', bankName: 'Jaiz Bank' },
  { bankCode: '000007', bankName: 'Fidelity Bank' },
  { bankCode: '000008', bankName: 'Polaris Bank' },
  { bankCode: '000009', bankName: 'Citibank Nigeria' },
  { bankCode: '000010', bankName: 'Ecobank Nigeria' },
  { bankCode: '000011', bankName: 'Unity Bank' },
  { bankCode: '000012', bankName: 'Stanbic IBTC Bank' },
  { bankCode: '000013', bankName: 'GTBank' },
  { bankCode: '000014', bankName: 'Access Bank' },
  { bankCode: '000015', bankName: 'Zenith Bank' },
  { bankCode: '000016', bankName: 'First Bank of Nigeria' },
  { bankCode: '000017', bankName: 'Wema Bank' },
  { bankCode: '000018', bankName: 'Union Bank' },
  { bankCode: '000021', bankName: 'Standard Chartered' },
  { bankCode: '000022', bankName: 'SunTrust Bank' },
  { bankCode: '000023', bankName: 'Providus Bank' },
  { bankCode: '000024', bankName: 'Rand Merchant Bank' },
  { bankCode: '000025', bankName: 'Titan Trust Bank' },
  { bankCode: '000026', bankName: 'Taj Bank' },
  { bankCode: '000027', bankName: 'Globus Bank' },
  { bankCode: '000029', bankName: 'Lotus Bank' },
  { bankCode: '000030', bankName: 'Parallex Bank' },
  { bankCode: '000031', bankName: 'PremiumTrust Bank' },
  { bankCode: '090267', bankName: 'Kuda Microfinance Bank' },
  { bankCode: '090405', bankName: 'Moniepoint Microfinance Bank' },
  { bankCode: '100004', bankName: 'OPay' },
  { bankCode: '100033', bankName: 'PalmPay' },
];

export interface SandboxAccount {
  accountNumber: string;
  bankCode: string;
  accountName: string;
  /** `''` where the account has no BVN linked, as the bank sends it. */
  bvn: string;
}

/** Accounts the name enquiry (ops 1 and 13) knows; any other number answers code 25. */
export const sandboxAccounts: readonly SandboxAccount[] = [
  { accountNumber: '0123456789', bankCode: '000023', accountName: 'ADAEZE CHIOMA OKONKWO', bvn: '22212345678' },
  { accountNumber: '1234567890', bankCode: '000023', accountName: 'BABATUNDE ADEWALE BELLO', bvn: '' },
  { accountNumber: '0011223344', bankCode: '000013', accountName: 'CHUKWUEMEKA OBI', bvn: '22298765432' },
  { accountNumber: '2233445566', bankCode: '000014', accountName: 'FATIMA BELLO YUSUF', bvn: '' },
  { accountNumber: '9876543210', bankCode: '000015', accountName: 'NGOZI EZE TRADING LTD', bvn: '22255566677' },
];

/** The account with this number (at `bankCode`, or at any bank when it is not given); first match. */
export function findSandboxAccount(accountNumber: string, bankCode?: string): SandboxAccount | undefined {
  return sandboxAccounts.find(
    (account) => account.accountNumber === accountNumber && (bankCode === undefined || account.bankCode === bankCode),
  );
}

/** BVN details (op 3), in the field names the sandbox sends (docs/bank-wire-format.md). */
export interface SandboxBvn {
  bvn: string;
  firstName: string;
  middleName: string;
  lastName: string;
  /** `YYYY-MM-DD`. */
  dateOfBirth: string;
  phoneNumber: string;
  gender: 'Male' | 'Female';
  email: string;
  enrollmentBank: string;
  enrollmentBranch: string;
  registrationDate: string;
  nameOnCard: string;
  nationality: string;
  stateOfOrigin: string;
  watchListed: 'YES' | 'NO';
}

export const sandboxBvns: readonly SandboxBvn[] = [
  {
    bvn: '22212345678',
    firstName: 'Adaeze',
    middleName: 'Chioma',
    lastName: 'Okonkwo',
    dateOfBirth: '1990-04-12',
    phoneNumber: '08031234567',
    gender: 'Female',
    email: 'adaeze.okonkwo@example.ng',
    enrollmentBank: '000023',
    enrollmentBranch: 'Victoria Island, Lagos',
    registrationDate: '2015-06-18',
    nameOnCard: 'ADAEZE C OKONKWO',
    nationality: 'Nigeria',
    stateOfOrigin: 'Anambra',
    watchListed: 'NO',
  },
  {
    bvn: '22298765432',
    firstName: 'Chukwuemeka',
    middleName: '',
    lastName: 'Obi',
    dateOfBirth: '1985-11-03',
    phoneNumber: '08059876543',
    gender: 'Male',
    email: 'emeka.obi@example.ng',
    enrollmentBank: '000013',
    enrollmentBranch: 'Wuse II, Abuja',
    registrationDate: '2014-09-02',
    nameOnCard: 'CHUKWUEMEKA OBI',
    nationality: 'Nigeria',
    stateOfOrigin: 'Enugu',
    watchListed: 'NO',
  },
  {
    bvn: '22255566677',
    firstName: 'Ngozi',
    middleName: '',
    lastName: 'Eze',
    dateOfBirth: '1979-02-21',
    phoneNumber: '08027778889',
    gender: 'Female',
    email: 'ngozi.eze@example.ng',
    enrollmentBank: '000015',
    enrollmentBranch: 'Aba Road, Port Harcourt',
    registrationDate: '2014-11-27',
    nameOnCard: 'NGOZI EZE',
    nationality: 'Nigeria',
    stateOfOrigin: 'Imo',
    watchListed: 'NO',
  },
];

/** A bill category (op 6), in the bank's field names. */
export interface SandboxBillCategory {
  category_id: number;
  list_order: string;
  name: string;
}

export const sandboxBillCategories: readonly SandboxBillCategory[] = [
  { category_id: 1, list_order: '1', name: 'Airtime' },
  { category_id: 2, list_order: '2', name: 'Data Bundles' },
  { category_id: 3, list_order: '3', name: 'Cable TV' },
  { category_id: 4, list_order: '4', name: 'Electricity' },
  { category_id: 5, list_order: '5', name: 'Internet Services' },
  { category_id: 6, list_order: '6', name: 'Education' },
];

/** A bill (op 7), in the field names the sandbox sends (docs/bank-wire-format.md). */
export interface SandboxBill {
  bill_id: number;
  name: string;
  category_id: number;
  bill_code: string;
  description: string;
  /** Convenience fee in naira, as decimal text. */
  fee: string;
  list_order: string;
}

function bill(category_id: number, bill_id: number, bill_code: string, name: string, description: string, fee: string): SandboxBill {
  return { bill_id, name, category_id, bill_code, description, fee, list_order: String(bill_id % 100) };
}

/** Bills by category; category 6 (Education) has none. */
export const sandboxBills: readonly SandboxBill[] = [
  bill(1, 101, 'MTN_VTU', 'MTN Airtime', 'MTN prepaid and postpaid airtime top-up', '0.00'),
  bill(1, 102, 'AIRTEL_VTU', 'Airtel Airtime', 'Airtel prepaid and postpaid airtime top-up', '0.00'),
  bill(1, 103, 'GLO_VTU', 'Glo Airtime', 'Glo prepaid airtime top-up', '0.00'),
  bill(1, 104, '9MOBILE_VTU', '9mobile Airtime', '9mobile prepaid airtime top-up', '0.00'),
  bill(2, 201, 'MTN_DATA', 'MTN Data', 'MTN data bundles', '0.00'),
  bill(2, 202, 'AIRTEL_DATA', 'Airtel Data', 'Airtel data bundles', '0.00'),
  bill(2, 203, 'GLO_DATA', 'Glo Data', 'Glo data bundles', '0.00'),
  bill(2, 204, '9MOBILE_DATA', '9mobile Data', '9mobile data bundles', '0.00'),
  bill(3, 301, 'DSTV', 'DSTV', 'DStv subscription renewal and bouquet change', '100.00'),
  bill(3, 302, 'GOTV', 'GOtv', 'GOtv subscription renewal', '100.00'),
  bill(3, 303, 'STARTIMES', 'StarTimes', 'StarTimes subscription renewal', '100.00'),
  bill(4, 401, 'IKEDC_PREPAID', 'Ikeja Electric (IKEDC) Prepaid', 'Ikeja Electric prepaid meter token', '100.00'),
  bill(4, 402, 'EKEDC_PREPAID', 'Eko Electric (EKEDC) Prepaid', 'Eko Electricity Distribution prepaid meter token', '100.00'),
  bill(4, 403, 'AEDC_PREPAID', 'Abuja Electric (AEDC) Prepaid', 'Abuja Electricity Distribution prepaid meter token', '100.00'),
  bill(5, 501, 'SPECTRANET', 'Spectranet', 'Spectranet 4G LTE internet plans', '50.00'),
  bill(5, 502, 'SMILE', 'Smile', 'Smile 4G LTE internet plans', '50.00'),
];

/** The wallet user of op 8's `data`. */
export interface SandboxWalletUser {
  id: string;
  role: string;
  email: string;
  lastName: string;
  firstName: string;
  createdAt: string;
  updatedAt: string;
}

/** The merchant of op 8's `merchant`. */
export interface SandboxMerchant {
  email: string;
  id: string;
  lastName: string;
  firstName: string;
  mode: string;
  role: string;
  owner: boolean;
  review: string;
  businessName: string;
  businessType: string;
  createdAt: string;
  updatedAt: string;
}

/** A wallet login the sandbox knows, with its initial password. */
export interface SandboxWalletAccount {
  email: string;
  password: string;
  /** A fixed forgot-password code (documented, so op 11 can be tried without e-mail); else random. */
  resetCode?: string;
  user: SandboxWalletUser;
  merchant: SandboxMerchant;
}

const createdAt = '2025-11-03T09:14:27.512Z';
const updatedAt = '2026-01-15T16:42:08.031Z';

/** The demo merchant: sign in with `merchant@sandbox.ng` / `Sandbox#2026`; reset code `482913`. */
export const sandboxMerchant: SandboxWalletAccount = {
  email: 'merchant@sandbox.ng',
  password: 'Sandbox#2026',
  resetCode: '482913',
  user: {
    id: '6f1c2b9e-4d3a-4e8b-9a71-2c5d8e0f1a34',
    role: 'admin',
    email: 'merchant@sandbox.ng',
    lastName: 'Okonkwo',
    firstName: 'Adaeze',
    createdAt,
    updatedAt,
  },
  merchant: {
    email: 'merchant@sandbox.ng',
    id: 'b3e7a1d2-8c4f-4b6e-a5d9-7f2e1c3b4a60',
    lastName: 'Okonkwo',
    firstName: 'Adaeze',
    mode: 'SANDBOX',
    role: 'owner',
    owner: true,
    review: 'PENDING',
    businessName: 'Adaeze Foods Ltd',
    businessType: 'Food & Beverage',
    createdAt,
    updatedAt,
  },
};

export const sandboxWalletAccounts: readonly SandboxWalletAccount[] = [sandboxMerchant];
