import { describe, expect, it } from 'vitest';
import { parseNotification, readSessionId, REJECTION_REASONS } from './notification.ts';

const LAGOS = 'Africa/Lagos';
const receivedAt = new Date('2026-11-22T13:05:10.250Z');

const COMPLETE = {
  sessionId: 'SES-0001',
  accountNumber: '0123456789',
  tranRemarks: 'Invoice 42',
  transactionAmount: '1500.00',
  settledAmount: '1490.00',
  feeAmount: '10.00',
  vatAmount: '0.75',
  currency: 'NGN',
  initiationTranRef: 'INI-77',
  settlementId: 'STL-2026-0001',
  sourceAccountNumber: '9876543210',
  sourceAccountName: 'Ada Obi',
  sourceBankName: 'Example Bank',
  channelId: '1',
  tranDateTime: '2026-11-22 14:05:09',
};

function parse(fields: Record<string, unknown>, timezone = LAGOS) {
  return parseNotification(JSON.stringify({ ...COMPLETE, ...fields }), { timezone, receivedAt });
}

function accepted(fields: Record<string, unknown>, timezone = LAGOS) {
  const result = parse(fields, timezone);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.reason}`);
  return result.notification;
}

function reasonFor(fields: Record<string, unknown>) {
  const result = parse(fields);
  return result.ok ? 'accepted' : result.reason;
}

function refusal(fields: Record<string, unknown>) {
  const result = parse(fields);
  return result.ok ? 'accepted' : { reason: result.reason, detail: result.detail };
}

describe('parseNotification: a complete body', () => {
  it('maps every field of the bank to the stored notification', () => {
    const rawBody = JSON.stringify(COMPLETE);
    const result = parseNotification(rawBody, { timezone: LAGOS, receivedAt });
    expect(result).toEqual({
      ok: true,
      notification: {
        settlementId: 'STL-2026-0001',
        sessionId: 'SES-0001',
        accountNumber: '0123456789',
        transactionAmount: '1500.00',
        settledAmount: '1490.00',
        feeAmount: '10.00',
        vatAmount: '0.75',
        currency: 'NGN',
        narration: 'Invoice 42',
        initiationTranRef: 'INI-77',
        sourceAccountNumber: '9876543210',
        sourceAccountName: 'Ada Obi',
        sourceBankName: 'Example Bank',
        channelId: '1',
        transactionTime: '2026-11-22T14:05:09+01:00',
        receivedAt: '2026-11-22T13:05:10.250Z',
        rawBody,
      },
    });
  });

  it('keeps the raw body verbatim, whitespace and key order included', () => {
    const rawBody = `\n  { "settlementId" : "S1", "accountNumber":"0123456789", "transactionAmount":"1.00" }  \n`;
    const result = parseNotification(rawBody, { timezone: LAGOS, receivedAt });
    expect(result.ok && result.notification.rawBody).toBe(rawBody);
  });

  it('reads a body that starts with a byte-order mark', () => {
    const rawBody = `\uFEFF${JSON.stringify(COMPLETE)}`;
    const result = parseNotification(rawBody, { timezone: LAGOS, receivedAt });
    expect(result.ok && result.notification.rawBody).toBe(rawBody);
  });

  it('accepts a body with only the required fields, the rest null', () => {
    const rawBody = JSON.stringify({ accountNumber: '0123456789', settlementId: 'S1', transactionAmount: '5' });
    const result = parseNotification(rawBody, { timezone: LAGOS, receivedAt });
    expect(result.ok && result.notification).toMatchObject({
      sessionId: '',
      settledAmount: null,
      currency: null,
      narration: null,
      channelId: null,
      transactionTime: null,
    });
  });
});

describe('parseNotification: the body', () => {
  it.each([
    ['malformed JSON', '{"accountNumber": "0123456789",'],
    ['an empty body', ''],
    ['a JSON array', '[{"accountNumber":"0123456789"}]'],
    ['JSON null', 'null'],
    ['a JSON string', '"hello"'],
    ['a JSON number', '42'],
  ])('refuses %s as body_not_json_object, echoing no sessionId', (_name, rawBody) => {
    expect(parseNotification(rawBody, { timezone: LAGOS, receivedAt })).toEqual({
      ok: false,
      sessionId: '',
      reason: 'body_not_json_object',
    });
  });

  it('echoes the sessionId of a refused body, with a reason from the closed list', () => {
    const result = parse({ accountNumber: '123' });
    expect(result).toMatchObject({ ok: false, sessionId: 'SES-0001' });
    expect(REJECTION_REASONS).toContain(!result.ok && result.reason);
  });
});

describe('parseNotification: accountNumber', () => {
  it('refuses an accountNumber of 9 digits', () => {
    expect(reasonFor({ accountNumber: '012345678' })).toBe('invalid_account_number');
  });

  it('refuses an accountNumber of 11 digits', () => {
    expect(reasonFor({ accountNumber: '01234567890' })).toBe('invalid_account_number');
  });

  it('refuses an accountNumber with letters or inner spaces', () => {
    expect(reasonFor({ accountNumber: '01234S6789' })).toBe('invalid_account_number');
    expect(reasonFor({ accountNumber: '01234 56789' })).toBe('invalid_account_number');
  });

  it('refuses an accountNumber sent as a JSON number', () => {
    expect(reasonFor({ accountNumber: 1234567890 })).toBe('invalid_account_number');
  });

  it('refuses a missing, null, blank or "null" accountNumber as missing', () => {
    expect(reasonFor({ accountNumber: undefined })).toBe('missing_account_number');
    expect(reasonFor({ accountNumber: null })).toBe('missing_account_number');
    expect(reasonFor({ accountNumber: '   ' })).toBe('missing_account_number');
    expect(reasonFor({ accountNumber: 'null' })).toBe('missing_account_number');
  });

  it('accepts an accountNumber with surrounding spaces, stored trimmed', () => {
    expect(accepted({ accountNumber: ' 0123456789 ' }).accountNumber).toBe('0123456789');
  });
});

describe('parseNotification: settlementId', () => {
  it('refuses a missing, null or blank settlementId', () => {
    expect(reasonFor({ settlementId: undefined })).toBe('missing_settlement_id');
    expect(reasonFor({ settlementId: null })).toBe('missing_settlement_id');
    expect(reasonFor({ settlementId: '' })).toBe('missing_settlement_id');
    expect(reasonFor({ settlementId: ' \t ' })).toBe('missing_settlement_id');
  });

  it('refuses the text "null" as a settlementId', () => {
    expect(reasonFor({ settlementId: 'NULL' })).toBe('missing_settlement_id');
  });

  it('refuses a settlementId that is neither a string nor a number', () => {
    expect(reasonFor({ settlementId: true })).toBe('invalid_settlement_id');
    expect(reasonFor({ settlementId: { id: 1 } })).toBe('invalid_settlement_id');
  });

  it('reads an id sent as a JSON number from its text, never through a double', () => {
    const body = JSON.stringify(COMPLETE)
      .replace('"settlementId":"STL-2026-0001"', '"settlementId":12345678901234567890123')
      .replace('"sessionId":"SES-0001"', '"sessionId":90110221122000001234');
    const result = parseNotification(body, { timezone: LAGOS, receivedAt });
    expect(result).toMatchObject({
      ok: true,
      notification: { settlementId: '12345678901234567890123', sessionId: '90110221122000001234' },
    });
    // An exponent is text like any other: kept as sent.
    expect(readSessionId('\ufeff{"sessionId":1.5E3}')).toBe('1.5E3');
  });

  it('stores the settlementId trimmed', () => {
    expect(accepted({ settlementId: '  STL-9  ' }).settlementId).toBe('STL-9');
  });

  it.each([
    ['a NUL', 'STL-\u00009', 'U+0000'],
    ['a zero-width space', 'STL-\u200b9', 'U+200B'],
    ['a byte-order mark', '\ufeffSTL-9', 'U+FEFF'],
    ['a right-to-left override', 'STL-\u202e9', 'U+202E'],
    ['a no-break space', 'STL-\u00a09', 'U+00A0'],
    ['an ideographic space', 'STL-\u30009', 'U+3000'],
    ['a tab at its end', 'STL-9\t', 'U+0009'],
    ['a soft hyphen', 'STL-\u00ad9', 'U+00AD'],
    ['a Hangul filler (default ignorable)', 'STL-\u31649', 'U+3164'],
    ['a lone surrogate', 'STL-\ud8009', 'U+D800'],
    ['a byte that was not UTF-8', 'STL-\ufffd9', 'U+FFFD'],
  ])('refuses a settlementId holding %s, naming it: two ids that print alike must be one', (_name, settlementId, codePoint) => {
    expect(parse({ settlementId })).toEqual({
      ok: false,
      sessionId: COMPLETE.sessionId,
      reason: 'invisible_character_in_id',
      detail: `settlementId holds ${codePoint}`,
    });
  });

  it('refuses a sessionId holding an invisible character', () => {
    expect(parse({ sessionId: 'SES\u200b-1' })).toMatchObject({
      ok: false,
      reason: 'invisible_character_in_id',
      detail: 'settlementId holds U+200B'.replace('settlementId', 'sessionId'),
    });
    expect(parse({ sessionId: 'SES\u0000-1' })).toMatchObject({ ok: false, reason: 'invisible_character_in_id' });
  });

  it.each([
    ['a composed É (NFC)', 'settlementId', 'STL-\u00c9', 'U+00C9'],
    ['an E and a combining acute (NFD)', 'settlementId', 'STL-E\u0301', 'U+0301'],
    ['a Cyrillic Ѕ', 'settlementId', '\u0405TL-9', 'U+0405'],
    ['a space inside', 'settlementId', 'STL 9', 'U+0020'],
    ['a Cyrillic е', 'sessionId', 'S\u0435S-1', 'U+0435'],
    ['a space inside', 'sessionId', 'SES 1', 'U+0020'],
    ['a space around it (it is stored and echoed as sent)', 'sessionId', ' SES-1', 'U+0020'],
  ])('refuses %s in the %s: ids are printable ASCII without spaces, so two that print alike are one', (_name, field, id, codePoint) => {
    expect(refusal({ [field]: id })).toEqual({ reason: 'id_not_printable_ascii', detail: `${field} holds ${codePoint}` });
  });

  it('takes every printable ASCII character in an id, and a settlementId with spaces around it, stored trimmed', () => {
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    expect(accepted({ settlementId: printable.slice(0, 64), sessionId: printable.slice(30) })).toMatchObject({
      settlementId: printable.slice(0, 64),
      sessionId: printable.slice(30),
    });
    expect(accepted({ settlementId: ' STL-9 ' }).settlementId).toBe('STL-9');
  });
});

describe('parseNotification: duplicate keys', () => {
  it('refuses a body holding a key twice, at any depth, naming it: parsers disagree on which wins', () => {
    const body = JSON.stringify(COMPLETE);
    const twice = body.replace('"transactionAmount":', '"transactionAmount":"950000.00","transactionAmount":');
    expect(parseNotification(twice, { timezone: LAGOS, receivedAt })).toEqual({
      ok: false,
      sessionId: COMPLETE.sessionId,
      reason: 'duplicate_key',
      detail: 'the key "transactionAmount" is given twice',
    });
    const deep = body.replace(/}$/, ',"extra":{"note":"a","note":"b"}}');
    expect(parseNotification(deep, { timezone: LAGOS, receivedAt })).toMatchObject({ ok: false, reason: 'duplicate_key' });
  });
});

describe('parseNotification: nesting', () => {
  /** COMPLETE with an extra field nesting `levels` arrays, the body itself one level more. */
  const nested = (levels: number) =>
    JSON.stringify({ ...COMPLETE, extra: null }).replace('null', `${'['.repeat(levels)}${']'.repeat(levels)}`);

  it('takes a body nested 32 levels deep, the body itself the first', () => {
    expect(parseNotification(nested(31), { timezone: LAGOS, receivedAt })).toMatchObject({ ok: true });
  });

  it.each([32, 4_000, 10_000, 32_000])(
    'refuses a body nested %i levels below its own, the same every time, echoing its sessionId',
    (levels) => {
      const body = nested(levels);
      const results = Array.from({ length: 3 }, () => parseNotification(body, { timezone: LAGOS, receivedAt }));
      for (const result of results)
        expect(result).toEqual({
          ok: false,
          sessionId: COMPLETE.sessionId,
          reason: 'body_too_deep',
          detail: 'it nests more than 32 levels deep',
        });
    },
  );

  it('reads an object nested as deep as the largest body allows with JSON.parse, which keeps a stack of its own', () => {
    // Pinned: the checks rely on it to read the sessionId of a body too deep for any recursive walk.
    const levels = 64 * 1024;
    expect(() => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`)).not.toThrow();
    expect(readSessionId(`{"sessionId":"S-deep","x":${'{"a":'.repeat(13_000)}1${'}'.repeat(13_000)}}`)).toBe('S-deep');
  });
});

describe('parseNotification: NUL characters', () => {
  it('drops NUL from stored text (PostgreSQL text cannot hold it) and keeps it in the raw body', () => {
    const raw = JSON.stringify({ ...COMPLETE, tranRemarks: 'Invoice\u0000 42' });
    const result = parseNotification(raw, { timezone: LAGOS, receivedAt });
    if (!result.ok) throw new Error(result.reason);
    expect(result.notification.narration).toBe('Invoice 42');
    expect(result.notification.rawBody).toBe(raw);
  });
});

describe('parseNotification: transactionAmount', () => {
  it.each(['1500.00', '0', '0.10', '1000000000000.000001', '007'])('accepts the plain decimal %j verbatim', (sent) => {
    expect(accepted({ transactionAmount: sent }).transactionAmount).toBe(sent);
  });

  it.each([
    ['a sign', '-5.00'],
    ['a plus sign', '+5.00'],
    ['an exponent', '1e3'],
    ['a thousands separator', '1,500.00'],
    ['a leading space', ' 1500.00'],
    ['a trailing dot', '1500.'],
    ['no integer part', '.50'],
    ['a currency code', 'NGN 1500'],
  ])('refuses an amount with %s', (_name, amount) => {
    expect(reasonFor({ transactionAmount: amount })).toBe('invalid_transaction_amount');
  });

  it('refuses an amount sent as a JSON number, which could not stay exact', () => {
    expect(reasonFor({ transactionAmount: 1500.5 })).toBe('invalid_transaction_amount');
  });

  it('refuses a missing, blank or "null" amount as missing', () => {
    expect(reasonFor({ transactionAmount: undefined })).toBe('missing_transaction_amount');
    expect(reasonFor({ transactionAmount: '' })).toBe('missing_transaction_amount');
    expect(reasonFor({ transactionAmount: 'null' })).toBe('missing_transaction_amount');
  });
});

describe('parseNotification: optional fields', () => {
  it('keeps settled, fee and VAT amounts verbatim when they are plain decimals', () => {
    const notification = accepted({ settledAmount: '1499.250', feeAmount: '0', vatAmount: '0.075' });
    expect(notification).toMatchObject({ settledAmount: '1499.250', feeAmount: '0', vatAmount: '0.075' });
  });

  it('refuses an optional amount that is given but not plain decimal text, naming it', () => {
    for (const name of ['settledAmount', 'feeAmount', 'vatAmount']) {
      for (const value of ['-1', '1,000.00', ' 10.00', '1e3', 'abc']) {
        expect(refusal({ [name]: value })).toEqual({ reason: 'invalid_amount', detail: `${name} is not a plain non-negative decimal` });
      }
      expect(refusal({ [name]: 10.5 })).toEqual({ reason: 'invalid_amount', detail: `${name} is not decimal text` });
    }
  });

  it('takes an optional amount left out: absent, JSON null, blank or "null"', () => {
    expect(accepted({ settledAmount: null, feeAmount: '  ', vatAmount: 'NULL' })).toMatchObject({
      settledAmount: null,
      feeAmount: null,
      vatAmount: null,
    });
  });

  it('turns blank strings into null', () => {
    const notification = accepted({ currency: '', tranRemarks: '   ', channelId: '\t', settledAmount: '' });
    expect(notification).toMatchObject({ currency: null, narration: null, channelId: null, settledAmount: null });
  });

  it('turns the text "null" into null, in any case and with spaces', () => {
    const notification = accepted({ currency: 'null', sourceBankName: ' NULL ', channelId: 'Null', vatAmount: 'null' });
    expect(notification).toMatchObject({ currency: null, sourceBankName: null, channelId: null, vatAmount: null });
  });

  it('turns a non-string optional field into null', () => {
    const notification = accepted({ channelId: 7, sourceAccountName: { first: 'Ada' }, currency: true });
    expect(notification).toMatchObject({ channelId: null, sourceAccountName: null, currency: null });
  });

  it('trims text fields, tranRemarks becoming narration', () => {
    const notification = accepted({ tranRemarks: '  Rent for May ', sourceAccountName: ' Ada Obi', currency: 'NGN ' });
    expect(notification).toMatchObject({ narration: 'Rent for May', sourceAccountName: 'Ada Obi', currency: 'NGN' });
  });

  it('keeps the sessionId verbatim, for the echo', () => {
    expect(accepted({ sessionId: 'SES-9"\\' }).sessionId).toBe('SES-9"\\');
  });

  it("gives an empty sessionId when it is absent or neither a string nor a number, and a number's text", () => {
    expect(accepted({ sessionId: undefined }).sessionId).toBe('');
    expect(accepted({ sessionId: false }).sessionId).toBe('');
    expect(accepted({ sessionId: 12 }).sessionId).toBe('12');
  });

  it('records receivedAt as ISO 8601', () => {
    expect(accepted({}).receivedAt).toBe('2026-11-22T13:05:10.250Z');
  });
});

describe('readSessionId', () => {
  it('reads the sessionId of a JSON object', () => {
    expect(readSessionId('{"sessionId":"SES-1","accountNumber":"x"}')).toBe('SES-1');
  });

  it("gives '' when the sessionId is absent or neither a string nor a number, and a number's text", () => {
    expect(readSessionId('{"accountNumber":"0123456789"}')).toBe('');
    expect(readSessionId('{"sessionId":null}')).toBe('');
    expect(readSessionId('{"sessionId":["S"]}')).toBe('');
    expect(readSessionId('{"sessionId":900000000000000000001}')).toBe('900000000000000000001');
  });

  it("gives '' when the body is not a JSON object", () => {
    expect(readSessionId('not json')).toBe('');
    expect(readSessionId('[{"sessionId":"SES-1"}]')).toBe('');
    expect(readSessionId('"SES-1"')).toBe('');
    expect(readSessionId('')).toBe('');
  });
});

describe('parseNotification: what the store can hold', () => {
  it('refuses a settlementId longer than 64 characters, and takes one of 64', () => {
    expect(reasonFor({ settlementId: 'S'.repeat(65) })).toBe('settlement_id_too_long');
    expect(reasonFor({ settlementId: ` ${'S'.repeat(64)} ` })).toBe('accepted');
  });

  it('refuses a sessionId longer than 64 characters, and takes one of 64: it is indexed too', () => {
    expect(reasonFor({ sessionId: 'S'.repeat(65) })).toBe('session_id_too_long');
    expect(reasonFor({ sessionId: 'S'.repeat(3_500) })).toBe('session_id_too_long');
    expect(accepted({ sessionId: 'S'.repeat(64) }).sessionId).toBe('S'.repeat(64));
  });

  it('refuses any amount with more than 18 digits on either side of its point', () => {
    expect(reasonFor({ transactionAmount: '1'.repeat(19) })).toBe('amount_too_long');
    expect(reasonFor({ transactionAmount: `1.${'0'.repeat(19)}` })).toBe('amount_too_long');
    for (const name of ['settledAmount', 'feeAmount', 'vatAmount']) {
      expect(reasonFor({ [name]: '1'.repeat(200_000) })).toBe('amount_too_long');
    }
    expect(reasonFor({ transactionAmount: `${'9'.repeat(18)}.${'9'.repeat(18)}`, settledAmount: '9'.repeat(18) })).toBe('accepted');
  });
});
