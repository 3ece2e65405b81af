import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers/index.ts';

const SCHEMA_DIR = join(import.meta.dirname, '..', 'schema');

/** The subgraph's SDL: `base.graphql` (the @link header, scalars) first, then every area's file by name. */
export function loadTypeDefs(): DocumentNode {
  const files = readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort((a, b) => Number(b === 'base.graphql') - Number(a === 'base.graphql') || a.localeCompare(b));
  return parse(files.map((file) => readFileSync(join(SCHEMA_DIR, file), 'utf8')).join('\n'));
}

/** The executable Federation 2 subgraph schema; built once per app, apart from any server. */
export function createSubgraphSchema(): GraphQLSchema {
  // The generated Resolvers type is stricter than @apollo/subgraph's loose map; the shapes match.
  return buildSubgraphSchema([{ typeDefs: loadTypeDefs(), resolvers: resolvers as GraphQLResolverMap<unknown> }]);
}
