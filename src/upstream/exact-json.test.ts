import { describe, expect, it } from 'vitest';
import { parseKeepingNumberText } from './exact-json.ts';

const AMOUNTS = new Set(['transactionAmount', 'feeAmount']);

describe('parseKeepingNumberText', () => {
  it('keeps the digits of an amount a double cannot hold, where JSON.parse loses them', () => {
    const text = '{"transactionAmount":99999999999999.99}';
    expect(String((JSON.parse(text) as { transactionAmount: number }).transactionAmount)).not.toBe('99999999999999.99');
    expect(parseKeepingNumberText(text, AMOUNTS)).toEqual({ transactionAmount: '99999999999999.99' });
  });

  it('gives a named field its source text whatever the number, trailing zeros included', () => {
    expect(parseKeepingNumberText('{"transactionAmount":1000.0,"feeAmount":0}', AMOUNTS)).toEqual({
      transactionAmount: '1000.0',
      feeAmount: '0',
    });
  });

  it('leaves other numbers as numbers where a double holds them, and as text where it does not', () => {
    expect(parseKeepingNumberText('{"flag":1,"id":12345678901234567890,"nested":{"feeAmount":5.50}}', AMOUNTS)).toEqual({
      flag: 1,
      id: '12345678901234567890',
      nested: { feeAmount: '5.50' },
    });
  });

  it('leaves strings alone and refuses what is not JSON', () => {
    expect(parseKeepingNumberText('{"transactionAmount":"1500.00"}', AMOUNTS)).toEqual({ transactionAmount: '1500.00' });
    expect(() => parseKeepingNumberText('<html>', AMOUNTS)).toThrow(SyntaxError);
  });
});
