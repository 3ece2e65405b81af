import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { enforceAccessRules } from './enforce.ts';

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
    expect(() => enforceAccessRules(schema, () => undefined)).toThrow('These fields need a scope their parent does not, so must be nullable: Query.secret');
  });

  it('guards a non-null field whose parent type already asks the same', () => {
    const schema = schemaOf(`
      type Query { page: Page @requiresScopes(scopes: [["collections:read"]]) }
      type Page @requiresScopes(scopes: [["collections:read"]]) { node: Node! }
      type Node @requiresScopes(scopes: [["collections:read"]]) { id: ID! secret: String @requiresScopes(scopes: [["kyc:read"]]) }
    `);
    expect(() => enforceAccessRules(schema, () => undefined)).not.toThrow();
  });
});
