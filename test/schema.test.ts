import { isInputObjectType, isInterfaceType, isObjectType, isScalarType, isSpecifiedScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSubgraphSchema } from '../src/schema.ts';

// Federation's own machinery (_Service, _Any, link__…) comes from @apollo/subgraph, not from us.
const isOurs = (name: string) => !name.startsWith('_') && !name.startsWith('link__') && !name.startsWith('federation__');

describe('the schema', () => {
  it('describes every type and every field, as Studio shows them', () => {
    const schema = createSubgraphSchema();
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isOurs(type.name) || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
      if (!type.description?.trim()) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (isOurs(field.name) && !field.description?.trim()) missing.push(`${type.name}.${field.name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
