/**
 * Whole responses of public reference data, answered from memory: Apollo's response-cache plugin
 * over an LRU of this replica's own. A query whose every field is public by the schema's cache hints
 * (the bank list, the bill categories, a category's bills, and their entity fetches) runs once, and
 * the same document with the same variables is then answered from memory, to anyone, until its data
 * would no longer be fresh. Kept per replica, not in Redis: a hit there costs a round trip that a
 * list this small does not repay (docs/benchmarks.md).
 *
 * What keeps it right:
 * - Kept only when Apollo's cache-control plugin finds the whole response public, it has no error,
 *   and its document reads nothing the access rules guard (nor introspection): a response some
 *   caller could be refused is never kept, whatever the hints say. So a personal field, a refusal
 *   or an error is never kept; nor is `_service` (Apollo gives it no hint), nor an entity fetch
 *   whose document could read anything but the catalogue's types.
 * - Read only after parsing, validation and the cost check (Apollo asks `responseForOperation` once
 *   every `didResolveOperation` passed), and `ROUTER_SECRET` is checked before Apollo is reached:
 *   every refusal that comes before execution stands for every caller.
 * - Never fresher than its data: an answer built on a cached reference list is public for what
 *   remains of that copy's freshness, not a whole TTL again, and one built on a stale copy (a failed
 *   refresh, stale-if-error) for none: it is `no-store`, never kept, and the next request asks the
 *   bank again. The plugin keeps each response for its maxAge, and on a hit sends the stored
 *   Cache-Control with `age`, so the router and CDNs count down the same freshness.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import ApolloServerPluginResponseCache from '@apollo/server-plugin-response-cache';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import { hash } from 'node:crypto';
import { BREAK, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';
import { readAccessRules } from '../auth/access-rules.ts';
import type { Loaders } from '../loaders/index.ts';
import type { Metrics } from '../metrics.ts';

/** What the response cache reads of an operation's context: how old its reference data is. */
export interface ResponseCacheContext {
  loaders: Pick<Loaders, 'oldestReferenceCopy'>;
}

export interface ResponseCacheOptions {
  /** The schema served, guarded: its access rules decide what may never be kept. */
  schema: GraphQLSchema;
  /** `BANK_LIST_TTL_S`: how long a reference list is fresh, the maxAge of its public hints. */
  catalogueMaxAgeS: number;
  metrics: Pick<Metrics, 'responseCache'>;
}

/** The response cache's plugins, hits and misses counted in `graphql_response_cache_total`. */
export function responseCachePlugins<C extends ResponseCacheContext>({
  schema,
  catalogueMaxAgeS,
  metrics,
}: ResponseCacheOptions): ApolloServerPlugin<C>[] {
  const readsGuarded = guardedReader(schema);
  const freshness: ApolloServerPlugin<C> = {
    async requestDidStart() {
      return {
        async executionDidStart({ contextValue, overallCachePolicy }) {
          return {
            // After every field has given its hint: what the reference data allows, at most.
            async executionDidEnd() {
              const fetchedAt = contextValue.loaders.oldestReferenceCopy();
              // Unrestricted means uncacheable; a maxAge set now would make it cacheable.
              if (fetchedAt === undefined || overallCachePolicy.maxAge === undefined) return;
              const ageS = Math.floor((performance.now() - fetchedAt) / 1000);
              overallCachePolicy.restrict({ maxAge: Math.max(0, catalogueMaxAgeS - ageS) });
            },
          };
        },
        async willSendResponse({ metrics: request }) {
          if (request.responseCacheHit) metrics.responseCache.inc({ outcome: 'hit' });
        },
      };
    },
  };
  const cache = ApolloServerPluginResponseCache<C>({
    // A cache of its own, bounded by size (Apollo's default for InMemoryLRUCache): the persisted
    // queries anyone may register in the server's cache cannot evict it.
    cache: new InMemoryLRUCache(),
    // The plugin's own key (a SHA-256 of the same data), through Node's one-shot hash: Apollo's
    // default reaches node:crypto through require() on every call, a cost on every hit.
    generateCacheKey: (_request, keyData) => hash('sha256', JSON.stringify(keyData)),
    async shouldWriteToCache({ response, overallCachePolicy, document }) {
      const { body } = response;
      if (body?.kind !== 'single' || body.singleResult.errors !== undefined || !body.singleResult.data) return false;
      if (overallCachePolicy.policyIfCacheable()?.scope !== 'PUBLIC' || document === undefined || readsGuarded(document)) return false;
      metrics.responseCache.inc({ outcome: 'miss' });
      return true;
    },
  });
  return [freshness, cache];
}

/**
 * Whether a document reads what the cache never keeps: a field, or any field of a type, that
 * `@authenticated` / `@requiresScopes` guard, or the schema by introspection (a door of its own).
 */
function guardedReader(schema: GraphQLSchema): (document: DocumentNode) => boolean {
  const rules = readAccessRules(schema);
  return (document) => {
    const types = new TypeInfo(schema);
    let guarded = false;
    visit(
      document,
      visitWithTypeInfo(types, {
        Field() {
          const [parent, field] = [types.getParentType(), types.getFieldDef()];
          if (!parent || !field) return undefined;
          const introspection = field.name === '__schema' || field.name === '__type';
          if (!introspection && rules.field(parent.name, field.name) === undefined && rules.entity(parent.name) === undefined)
            return undefined;
          guarded = true;
          return BREAK;
        },
      }),
    );
    return guarded;
  };
}
