// The subgraph's schema, built in one place and only guarded: the server, `npm run schema:print`,
// codegen and every test get it from `createSubgraphSchema`, so there is no unguarded variant to
// serve or print by mistake.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { isObjectType, Kind, parse, visit, type ConstDirectiveNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import { ACCESS_DIRECTIVES } from './auth/access-rules.ts';
import { enforceAccessRules, type RefusalCounter } from './auth/enforce.ts';
import { badUserInput } from './errors.ts';
import { resolvers } from './resolvers/index.ts';

const SCHEMA_DIR = join(import.meta.dirname, '..', 'schema');

export interface SchemaOptions {
  /**
   * `BANK_LIST_TTL_S`: the bank's catalogue (`Bank`, `BillCategory`, `Bill`: `@cacheControl(scope: PUBLIC)`
   * with no maxAge, since the SDL cannot read the variable) gets it as its maxAge, once, here.
   */
  catalogueMaxAgeS?: number | undefined;
  /**
   * `PUBLISH_ACCESS_DIRECTIVES`: false leaves `@authenticated` / `@requiresScopes` out of the SDL the
   * subgraph publishes (`_service.sdl`), for a gateway that cannot read them. They are enforced here either way.
   */
  publishAccessDirectives?: boolean | undefined;
  /** Told of every refusal, by reason (the refusals metric). */
  onRefusal?: RefusalCounter | undefined;
}

/**
 * The executable Federation 2 subgraph schema with its access rules enforced by its own resolvers
 * (auth/enforce.ts), for every transport; built once per app, apart from any server.
 */
export function createSubgraphSchema(options: SchemaOptions = {}): GraphQLSchema {
  const typeDefs = withCatalogueMaxAge(subgraphTypeDefs(), options.catalogueMaxAgeS);
  // The generated Resolvers type is stricter than @apollo/subgraph's loose map; the shapes match.
  const schema = buildSubgraphSchema([{ typeDefs, resolvers: resolvers as GraphQLResolverMap<unknown> }]);
  failReferencesOneByOne(schema);
  enforceAccessRules(schema, options.onRefusal ?? (() => undefined));
  if (options.publishAccessDirectives === false) publishSdl(schema, withoutAccessDirectives(typeDefs));
  return schema;
}

/**
 * `_entities` resolves a batch of references in one map, where one that throws (an unknown
 * `__typename`, a key of the wrong type) would fail them all: each is resolved on its own, so a
 * malformed reference fails alone and the rest of the batch is answered.
 */
function failReferencesOneByOne(schema: GraphQLSchema): void {
  const entities = schema.getQueryType()?.getFields()._entities;
  const resolve = entities?.resolve;
  if (entities === undefined || resolve === undefined) return;
  entities.resolve = (source, args: { representations: unknown[] }, context, info) =>
    args.representations.map((representation, index) => {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (typeof typename !== 'string' || !isObjectType(schema.getType(typename))) {
        return Promise.reject(
          badUserInput(`representations[${index}]`, 'must be an object with the __typename of an entity of this subgraph.'),
        );
      }
      try {
        return (resolve(source, { representations: [representation] }, context, info) as unknown[])[0];
      } catch (error) {
        return Promise.reject(error);
      }
    });
}

/**
 * The SDL the schema is built from: `base.graphql` (the @link header, scalars) first, then every
 * area's file by name. Codegen reads it here too, so the typed resolvers and the served schema
 * cannot come from different files.
 */
export function subgraphTypeDefs(): DocumentNode {
  const files = readdirSync(SCHEMA_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort((a, b) => Number(b === 'base.graphql') - Number(a === 'base.graphql') || a.localeCompare(b));
  return parse(files.map((file) => readFileSync(join(SCHEMA_DIR, file), 'utf8')).join('\n'));
}

/** Adds `maxAge` to every `@cacheControl(scope: PUBLIC)` that has none. */
function withCatalogueMaxAge(typeDefs: DocumentNode, maxAgeS: number | undefined): DocumentNode {
  if (maxAgeS === undefined) return typeDefs;
  const isPublicWithoutMaxAge = (directive: ConstDirectiveNode) =>
    directive.name.value === 'cacheControl' &&
    directive.arguments?.some((arg) => arg.name.value === 'scope' && arg.value.kind === Kind.ENUM && arg.value.value === 'PUBLIC') ===
      true &&
    !directive.arguments.some((arg) => arg.name.value === 'maxAge');
  return visit(typeDefs, {
    Directive(directive) {
      if (!isPublicWithoutMaxAge(directive as ConstDirectiveNode)) return undefined;
      const maxAge = {
        kind: Kind.ARGUMENT,
        name: { kind: Kind.NAME, value: 'maxAge' },
        value: { kind: Kind.INT, value: String(maxAgeS) },
      } as const;
      return { ...directive, arguments: [...(directive.arguments ?? []), maxAge] };
    },
  });
}

/** `typeDefs` without the access directives, nor their names in the federation `@link`'s `import`. */
function withoutAccessDirectives(typeDefs: DocumentNode): DocumentNode {
  return visit(typeDefs, {
    Directive: (directive) => (ACCESS_DIRECTIVES.has(directive.name.value) ? null : undefined),
    ListValue(list, _key, parent) {
      const isImport =
        (parent as { kind?: string; name?: { value: string } } | undefined)?.kind === Kind.ARGUMENT &&
        (parent as { name: { value: string } }).name.value === 'import';
      if (!isImport) return undefined;
      return {
        ...list,
        values: list.values.filter((value) => !(value.kind === Kind.STRING && ACCESS_DIRECTIVES.has(value.value.replace(/^@/, '')))),
      };
    },
  });
}

/** Makes `_service.sdl` answer `typeDefs` as @apollo/subgraph prints them, in place of the full SDL. */
function publishSdl(schema: GraphQLSchema, typeDefs: DocumentNode): void {
  const printed = buildSubgraphSchema(typeDefs).getQueryType()!.getFields()._service!.resolve!({}, {}, undefined, undefined as never) as {
    sdl: string;
  };
  schema.getQueryType()!.getFields()._service!.resolve = () => printed;
}
