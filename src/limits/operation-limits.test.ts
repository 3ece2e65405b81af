import { getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { createSubgraphSchema } from '../schema.ts';
import { createOperationLimits } from './operation-limits.ts';

const limits = createOperationLimits(createSubgraphSchema(), { maxCost: 25, introspection: true, logger: createLogger('silent') });

/** The refusal's estimated cost for `source` with `variables`, or 'allowed'. */
function verdict(document: ReturnType<typeof parse>, variables?: Record<string, unknown>) {
  const refusal = limits.refuseTooExpensive(document, getOperationAST(document)!, variables);
  return refusal === undefined ? 'allowed' : (refusal.extensions.cost as { estimated: number }).estimated;
}

// A document's price is kept once worked out; only where variables cannot change it.
describe('refuseTooExpensive', () => {
  it('prices a document with variables anew for each request, by the variables sent', () => {
    const document = parse('query($reps: [_Any!]!) { _entities(representations: $reps) { ... on Account { accountName } } }');
    const account = { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' };
    expect(verdict(document, { reps: [account] })).toBe('allowed');
    expect(verdict(document, { reps: Array.from({ length: 30 }, () => account) })).toBe(30);
    expect(verdict(document, { reps: [account, account] })).toBe('allowed');
  });

  it('answers the same for the same document without variables, request after request', () => {
    const dear = parse(
      `{ ${Array.from({ length: 26 }, (_, i) => `a${i}: account(accountNumber: "0123456789", bankCode: "000023") { accountName }`).join(' ')} }`,
    );
    const cheap = parse('{ banks { code } }');
    for (let i = 0; i < 3; i += 1) {
      expect(verdict(dear)).toBe(26);
      expect(verdict(cheap)).toBe('allowed');
    }
  });
});
