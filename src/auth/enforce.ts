// The one place access rules are enforced: every guarded resolver of the schema, wrapped once at build.
import { defaultFieldResolver, GraphQLError, isNonNullType, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { forbiddenAccount, unauthenticated, unauthorizedField } from '../errors.ts';
import { readAccessRules, refusalFor, type AccessRules, type Requirement } from './access-rules.ts';
import type { Caller, RefusalReason } from './caller.ts';
import { endingWithToken, TOKEN_END_PROBLEMS } from './token-deadline.ts';

/** What an operation's context tells the rules: who calls, and whether its streams end with its token. */
export interface AuthContext {
  readonly caller: Caller;
  /**
   * True where nothing else ends a subscription when the token ends, expired or its key withdrawn
   * (the callback protocol): the stream then ends itself with UNAUTHENTICATED. A WebSocket's
   * connection closes instead (4401).
   */
  readonly streamsEndWithToken?: boolean | undefined;
}

/** Told of every refusal, by reason (the refusals metric). */
export type RefusalCounter = (reason: RefusalReason) => void;

/**
 * Wraps, in place, every resolver of `schema` that `@authenticated` / `@requiresScopes` guard
 * (directly, or through the type it returns), every guarded subscription's `subscribe`, and every
 * guarded entity's reference resolver (`_entities`). A refused field resolves to an error (null,
 * with UNAUTHENTICATED or UNAUTHORIZED_FIELD_OR_TYPE); the rest of the operation is answered.
 * Unguarded resolvers are left as they are, so they cost nothing more.
 */
export function enforceAccessRules(schema: GraphQLSchema, countRefusal: RefusalCounter): void {
  const rules = readAccessRules(schema);
  assertRefusalsStayLocal(schema, rules);
  const check = (requirement: Requirement, context: unknown): GraphQLError | undefined => {
    const reason = refusalFor((context as AuthContext).caller, requirement);
    if (reason === undefined) return undefined;
    countRefusal(reason);
    return refusalError(reason, (context as AuthContext).caller, requirement);
  };

  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const requirement = rules.field(type.name, field.name);
      if (requirement === undefined) continue;
      if (field.subscribe !== undefined) {
        // Checked once, when the subscription starts; its events are the stream's own.
        field.subscribe = guardedSubscribe(field.subscribe, (context) => check(requirement, context), countRefusal);
        continue;
      }
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context, info) => {
        const refused = check(requirement, context);
        if (refused) throw refused;
        return resolve(source, args, context, info);
      };
    }
    const requirement = rules.entity(type.name);
    const apollo = type.extensions.apollo as { subgraph?: { resolveReference?: ReferenceResolver } } | undefined;
    const resolveReference = apollo?.subgraph?.resolveReference;
    if (requirement === undefined || resolveReference === undefined) continue;
    const guarded: ReferenceResolver = (reference, context, info) => {
      const refused = check(requirement, context);
      // Rejected, not thrown: `_entities` resolves references in one map, and a throw would fail them all.
      return refused ? Promise.reject(refused) : resolveReference(reference, context, info);
    };
    type.extensions = { ...type.extensions, apollo: { ...apollo, subgraph: { ...apollo!.subgraph, resolveReference: guarded } } };
  }
}

/**
 * Throws, at build, when a refusal could take more than its own field: every field that needs more
 * than its parent type already required must be nullable (a subscription's root field aside: its
 * refusal ends the subscription, which has nothing else to lose).
 */
function assertRefusalsStayLocal(schema: GraphQLSchema, rules: AccessRules): void {
  const subscription = schema.getSubscriptionType();
  const nonNull: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || type === subscription) continue;
    const parent = rules.entity(type.name);
    for (const field of Object.values(type.getFields())) {
      const requirement = rules.field(type.name, field.name);
      if (requirement !== undefined && isNonNullType(field.type) && !implies(parent, requirement))
        nonNull.push(`${type.name}.${field.name}`);
    }
  }
  if (nonNull.length > 0) throw new Error(`These fields need a scope their parent does not, so must be nullable: ${nonNull.join(', ')}`);
}

/**
 * Whether whoever passed `parent` also passes `child`: each of the child's entries is met by some
 * entry of the parent's, every alternative of which holds the scopes of one of the child's
 * alternatives (a parent needing `reconcile` implies a child needing `review` or `reconcile`).
 */
export function implies(parent: Requirement | undefined, child: Requirement): boolean {
  if (parent === undefined) return false;
  const covers = (allOf: readonly string[], than: readonly string[]) => than.every((scope) => allOf.includes(scope));
  const meets = (parentAnyOf: readonly (readonly string[])[], childAnyOf: readonly (readonly string[])[]) =>
    parentAnyOf.length > 0 && parentAnyOf.every((allOf) => childAnyOf.some((needed) => covers(allOf, needed)));
  return (
    (parent.authenticated || !child.authenticated) &&
    child.scopes.every((childAnyOf) => parent.scopes.some((anyOf) => meets(anyOf, childAnyOf)))
  );
}

type ReferenceResolver = (reference: object, context: unknown, info: unknown) => unknown;

function guardedSubscribe(
  subscribe: GraphQLFieldResolver<unknown, unknown>,
  check: (context: unknown) => GraphQLError | undefined,
  countRefusal: RefusalCounter,
): GraphQLFieldResolver<unknown, unknown> {
  return async (source, args, context, info) => {
    const refused = check(context);
    if (refused) throw refused;
    const stream = await subscribe(source, args, context, info);
    const { caller, streamsEndWithToken } = context as AuthContext;
    if (!streamsEndWithToken || caller.kind !== 'verified' || !isAsyncIterator(stream)) return stream;
    return endingWithToken(stream, caller.lifetime, (why) => {
      countRefusal(why);
      return unauthenticated(`${TOKEN_END_PROBLEMS[why]}; subscribe again with a fresh token and \`after\``);
    });
  };
}

function isAsyncIterator(value: unknown): value is AsyncIterableIterator<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** The error a refused field resolves to; it names what was wrong, never anything of the token. */
function refusalError(reason: RefusalReason, caller: Caller, requirement: Requirement): GraphQLError {
  if (reason === 'missing_scope' && caller.kind === 'verified') {
    const unmet = requirement.scopes.find((anyOf) => !anyOf.some((allOf) => allOf.every((scope) => caller.scopes.has(scope))));
    return unauthorizedField(unmet ?? []);
  }
  if (reason === 'forbidden_account') return forbiddenAccount('The account');
  return unauthenticated(TOKEN_PROBLEMS[reason as keyof typeof TOKEN_PROBLEMS] ?? 'the token was not accepted');
}

/** What the client is told of each reason a token fails: enough to fix it, nothing of the token. */
const TOKEN_PROBLEMS = {
  no_token: 'none was sent',
  malformed_token: 'the Authorization value is not "Bearer <JWT>"',
  bad_signature: 'its signature does not verify',
  unknown_key: "it is signed with a key the issuer's JWKS does not hold",
  algorithm_not_allowed: 'its algorithm is not an allowed asymmetric one',
  expired: 'it has expired',
  not_yet_valid: 'it is not valid yet (nbf)',
  wrong_issuer: 'it was issued by another issuer',
  wrong_audience: 'it is meant for another audience',
  invalid_claims: 'a claim is missing or malformed (exp, scope, or the accounts claim)',
  development_key: 'it is signed with the published development key, refused outside the in-process sandbox',
  keys_unavailable: "the issuer's keys could not be read; try again shortly",
} satisfies Partial<Record<RefusalReason, string>>;
