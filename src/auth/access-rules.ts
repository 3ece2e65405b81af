/**
 * Who may read what: Federation's `@authenticated` and `@requiresScopes`, read once from the built
 * schema's SDL nodes (as limits/prices.ts reads `@cost`), so the subgraph enforces exactly what the
 * router is told.
 */
import {
  getNamedType,
  isObjectType,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import type { Caller, RefusalReason } from './caller.ts';

/**
 * What reading a field (or resolving an entity) needs. `scopes`: every entry must hold; an entry
 * holds when the token carries all the scopes of one of its alternatives (`@requiresScopes`'s
 * OR of ANDs).
 */
export interface Requirement {
  readonly authenticated: boolean;
  readonly scopes: readonly (readonly (readonly string[])[])[];
}

export interface AccessRules {
  /** What `Type.field` needs: its own directives and those of the type it returns; undefined when nothing. */
  field(type: string, field: string): Requirement | undefined;
  /** What resolving a reference of an entity type needs (`_entities`); undefined when nothing. */
  entity(type: string): Requirement | undefined;
}

// Imported through `@link(… import: […])`; the namespaced names when not imported.
const AUTHENTICATED = new Set(['authenticated', 'federation__authenticated']);
const REQUIRES_SCOPES = new Set(['requiresScopes', 'federation__requiresScopes']);
/** Every name an access directive goes by. */
export const ACCESS_DIRECTIVES: ReadonlySet<string> = new Set([...AUTHENTICATED, ...REQUIRES_SCOPES]);

/** Reads every `@authenticated` and `@requiresScopes` of `schema` (they survive `buildSubgraphSchema` on the AST nodes). */
export function readAccessRules(schema: GraphQLSchema): AccessRules {
  const types = new Map<string, Requirement>();
  const fields = new Map<string, Requirement>();
  for (const type of Object.values(schema.getTypeMap())) {
    const own = requirementOf(directivesOf(type));
    if (own) types.set(type.name, own);
  }
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const combined = combine(requirementOf(field.astNode?.directives ?? []), types.get(returnTypeName(field)));
      if (combined) fields.set(`${type.name}.${field.name}`, combined);
    }
  }
  return {
    field: (type, field) => fields.get(`${type}.${field}`),
    entity: (type) => types.get(type),
  };
}

/**
 * Whether `caller` may have what `requirement` guards: undefined when it may, else why not. With
 * authorization off (`unchecked`) everything is allowed; a caller without a valid token gets the
 * reason its token failed (or `no_token`), whichever directive is in the way.
 */
export function refusalFor(caller: Caller, requirement: Requirement): RefusalReason | undefined {
  switch (caller.kind) {
    case 'unchecked':
      return undefined;
    case 'anonymous':
      return 'no_token';
    case 'refused':
      return caller.reason;
    case 'verified':
      return requirement.scopes.every((anyOf) => anyOf.some((allOf) => allOf.every((scope) => caller.scopes.has(scope))))
        ? undefined
        : 'missing_scope';
  }
}

function returnTypeName(field: GraphQLField<unknown, unknown>): string {
  return getNamedType(field.type).name;
}

function directivesOf(type: GraphQLNamedType): readonly ConstDirectiveNode[] {
  return [...(type.astNode?.directives ?? []), ...type.extensionASTNodes.flatMap((node) => node.directives ?? [])];
}

function requirementOf(directives: readonly ConstDirectiveNode[]): Requirement | undefined {
  const authenticated = directives.some((directive) => AUTHENTICATED.has(directive.name.value));
  const scopes = directives
    .filter((directive) => REQUIRES_SCOPES.has(directive.name.value))
    .map((directive) => scopeAlternatives(directive));
  return authenticated || scopes.length > 0 ? { authenticated: authenticated || scopes.length > 0, scopes } : undefined;
}

function scopeAlternatives(directive: ConstDirectiveNode): readonly (readonly string[])[] {
  const node = directive.arguments?.find((argument) => argument.name.value === 'scopes');
  const value: unknown = node === undefined ? [] : valueFromASTUntyped(node.value);
  if (!Array.isArray(value)) return [];
  return value.map((allOf: unknown) => (Array.isArray(allOf) ? allOf.filter((scope): scope is string => typeof scope === 'string') : []));
}

function combine(a: Requirement | undefined, b: Requirement | undefined): Requirement | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return { authenticated: a.authenticated || b.authenticated, scopes: [...a.scopes, ...b.scopes] };
}
