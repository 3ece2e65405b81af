import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { enforceAccessRules, implies } from './enforce.ts';

const schemaOf = (types: string) =>
  buildSubgraphSchema(
    parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@authenticated", "@requiresScopes"])
      ${types}
    `),
  );

describe('enforceAccessRules', () => {
  it('refuses to guard a schema where a refusal would null more than its own field', () => {
    const schema = schemaOf(`
      type Query { secret: String! @requiresScopes(scopes: [["kyc:read"]]) open: String }
      type Subscription { live: String! @authenticated }
    `);
    expect(() => enforceAccessRules(schema, () => undefined)).toThrow(
      'These fields need a scope their parent does not, so must be nullable: Query.secret',
    );
  });

  it('guards a non-null field whose parent type already asks the same', () => {
    const schema = schemaOf(`
      type Query { page: Page @requiresScopes(scopes: [["collections:read"]]) }
      type Page @requiresScopes(scopes: [["collections:read"]]) { node: Node! }
      type Node @requiresScopes(scopes: [["collections:read"]]) { id: ID! secret: String @requiresScopes(scopes: [["kyc:read"]]) }
    `);
    expect(() => enforceAccessRules(schema, () => undefined)).not.toThrow();
  });

  it('guards a non-null field whose type any caller of its parent may read, among other callers', () => {
    const schema = schemaOf(`
      type Query { check: Check @requiresScopes(scopes: [["collections:reconcile"]]) }
      type Check @requiresScopes(scopes: [["collections:reconcile"]]) { kept: [Kept!]! }
      type Kept @requiresScopes(scopes: [["collections:review"], ["collections:reconcile"]]) { id: ID! }
    `);
    expect(() => enforceAccessRules(schema, () => undefined)).not.toThrow();
  });
});

describe('implies', () => {
  const needs = (...scopes: string[][][]) => ({ authenticated: true, scopes });
  it('holds where every way through the parent passes the child too, and nowhere else', () => {
    expect(implies(needs([['a']]), needs([['a'], ['b']]))).toBe(true);
    expect(implies(needs([['a', 'b']]), needs([['a']]))).toBe(true);
    expect(implies(needs([['a'], ['b']]), needs([['a'], ['b'], ['c']]))).toBe(true);
    expect(implies(needs([['a']], [['c']]), needs([['c']], [['a']]))).toBe(true);
    // The parent's `b` alone would not pass the child.
    expect(implies(needs([['a'], ['b']]), needs([['a']]))).toBe(false);
    expect(implies(needs([['a']]), needs([['a', 'b']]))).toBe(false);
    expect(implies(needs(), needs([['a']]))).toBe(false);
    expect(implies(undefined, needs())).toBe(false);
    expect(implies({ authenticated: false, scopes: [] }, needs())).toBe(false);
  });
});
