import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers/index.ts';

const SCHEMA_DIR = join(import.meta.dirname, '..', 'schema');

/** The subgraph's SDL: every `schema/*.graphql` file, in name order, as one document. */
export function loadTypeDefs(): DocumentNode {
  const files = readdirSync(SCHEMA_DIR).filter((file) => file.endsWith('.graphql')).sort();
  return parse(files.map((file) => readFileSync(join(SCHEMA_DIR, file), 'utf8')).join('\n'));
}

/** The executable Federation 2 subgraph schema; built once per app, apart from any server. */
export function createSubgraphSchema(): GraphQLSchema {
  // The generated Resolvers type is stricter than @apollo/subgraph's loose map; the shapes match.
  return buildSubgraphSchema([{ typeDefs: loadTypeDefs(), resolvers: resolvers as GraphQLResolverMap<unknown> }]);
}
