import { parse, type ExecutionArgs } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSubgraphSchema } from '../../schema.ts';
import { sharedExecutionKey } from './shareable.ts';

const schema = createSubgraphSchema();

function keyOf(query: string, variables: Record<string, unknown> = {}, operationName?: string) {
  const args: ExecutionArgs = { schema, document: parse(query), variableValues: variables, operationName };
  return sharedExecutionKey(args, { query, variables, operationName });
}

const LIVE = 'subscription($account: String, $after: String) { incomingTransfer(accountNumber: $account, after: $after) { settlementId } }';

describe('sharedExecutionKey', () => {
  it('gives equal keys to the same text and variables, whatever the variables order', () => {
    const one = keyOf('subscription($a: String, $b: String) { incomingTransfer(accountNumber: $a, after: $b) { settlementId } }', {
      a: '0123456789',
      b: null,
    });
    const two = keyOf('subscription($a: String, $b: String) { incomingTransfer(accountNumber: $a, after: $b) { settlementId } }', {
      b: null,
      a: '0123456789',
    });
    expect(one).toBeDefined();
    expect(one).toBe(two);
  });

  it('gives different keys to different filters, selections and operation names', () => {
    const keys = [
      keyOf(LIVE, { account: '0123456789' }),
      keyOf(LIVE, { account: '2233445566' }),
      keyOf(LIVE),
      keyOf('subscription { incomingTransfer { settlementId cursor } }'),
      keyOf('subscription A { incomingTransfer { settlementId } } subscription B { incomingTransfer { cursor } }', {}, 'A'),
      keyOf('subscription A { incomingTransfer { settlementId } } subscription B { incomingTransfer { cursor } }', {}, 'B'),
    ];
    expect(keys.every((key) => key !== undefined)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('lets a replay run alone: after as a variable, a literal, a default or in a fragment', () => {
    expect(keyOf(LIVE, { after: 'MTA' })).toBeUndefined();
    expect(keyOf('subscription { incomingTransfer(after: "MTA") { settlementId } }')).toBeUndefined();
    expect(keyOf('subscription($after: String = "MTA") { incomingTransfer(after: $after) { settlementId } }')).toBeUndefined();
    expect(keyOf('subscription { ...F } fragment F on Subscription { incomingTransfer(after: "MTA") { settlementId } }')).toBeUndefined();
    expect(keyOf('subscription { incomingTransfer(after: null) { settlementId } }')).toBeDefined();
  });

  it('shares no query, and no operation whose variables do not coerce', () => {
    expect(keyOf('{ banks { code } }')).toBeUndefined();
    expect(keyOf(LIVE, { account: 42 })).toBeUndefined();
  });
});
