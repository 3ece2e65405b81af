import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { Kind, parse, visit, type ConstDirectiveNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers/index.ts';

const SCHEMA_DIR = join(import.meta.dirname, '..', 'schema');

/** The subgraph's SDL: `base.graphql` (the @link header, scalars) first, then every area's file by name. */
export function loadTypeDefs(): DocumentNode {
  const files = readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort((a, b) => Number(b === 'base.graphql') - Number(a === 'base.graphql') || a.localeCompare(b));
  return parse(files.map((file) => readFileSync(join(SCHEMA_DIR, file), 'utf8')).join('\n'));
}

/**
 * The executable Federation 2 subgraph schema; built once per app, apart from any server. With
 * `catalogueMaxAgeS`, the bank's catalogue (`Bank`, `BillCategory`: `@cacheControl(scope: PUBLIC)`
 * with no maxAge, since the SDL cannot read `BANK_LIST_TTL_S`) gets that maxAge here, once, rather
 * than from a hook on every field of every response (server/cache-hints.ts).
 */
export function createSubgraphSchema(options: { catalogueMaxAgeS?: number } = {}): GraphQLSchema {
  const typeDefs = options.catalogueMaxAgeS === undefined ? loadTypeDefs() : withCatalogueMaxAge(loadTypeDefs(), options.catalogueMaxAgeS);
  // The generated Resolvers type is stricter than @apollo/subgraph's loose map; the shapes match.
  return buildSubgraphSchema([{ typeDefs, resolvers: resolvers as GraphQLResolverMap<unknown> }]);
}

/** Adds `maxAge` to every `@cacheControl(scope: PUBLIC)` that has none. */
export function withCatalogueMaxAge(typeDefs: DocumentNode, maxAgeS: number): DocumentNode {
  const isPublicWithoutMaxAge = (directive: ConstDirectiveNode) =>
    directive.name.value === 'cacheControl' &&
    directive.arguments?.some((arg) => arg.name.value === 'scope' && arg.value.kind === Kind.ENUM && arg.value.value === 'PUBLIC') === true &&
    !directive.arguments.some((arg) => arg.name.value === 'maxAge');
  return visit(typeDefs, {
    Directive(directive) {
      if (!isPublicWithoutMaxAge(directive as ConstDirectiveNode)) return undefined;
      const maxAge = { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'maxAge' }, value: { kind: Kind.INT, value: String(maxAgeS) } } as const;
      return { ...directive, arguments: [...(directive.arguments ?? []), maxAge] };
    },
  });
}
