import { maybeCacheControlFromInfo, type ResolveInfoCacheControl } from '@apollo/cache-control-types';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import { isCompositeType, type GraphQLResolveInfo } from 'graphql';

/**
 * Apollo's cache-control plugin, then the router's entity fetches of the bank's catalogue. The
 * catalogue types (`Bank`, `BillCategory`) carry `BANK_LIST_TTL_S` as their maxAge in the schema
 * (createSubgraphSchema), so Apollo's plugin gives every field returning them that TTL; everything
 * else keeps Apollo's default of 0 (`no-store`), and one personal field makes the whole response so.
 * Apollo's plugin cannot see through `_entities` (a union it knows no hint for), so ours makes an
 * entity fetch public for the TTL when every representation asked for is of a catalogue type.
 *
 * Apollo's plugin is listed explicitly, after ours, because the order matters: Apollo Server calls
 * `willResolveField` in reverse plugin order, so its plugin sets each field's static hint first and
 * ours then raises `_entities`'; its field-end hook then applies the default of 0 to the rest.
 */
export function cacheHintPlugins<C extends object>(catalogueMaxAgeS: number): ApolloServerPlugin<C>[] {
  return [catalogueEntities(catalogueMaxAgeS), ApolloServerPluginCacheControl({ defaultMaxAge: 0 })];
}

function catalogueEntities<C extends object>(maxAge: number): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async executionDidStart() {
          return {
            willResolveField({ info, args }) {
              // Called for every field of every response: anything but a root `_entities` leaves at once.
              if (info.path.prev !== undefined || info.fieldName !== '_entities' || info.parentType !== info.schema.getQueryType()) return;
              const hints = maybeCacheControlFromInfo(info);
              if (hints === null) return;
              const { representations } = args as { representations?: { __typename?: unknown }[] };
              if (representations?.length && representations.every((r) => isCatalogueType(info, hints, r.__typename, maxAge))) {
                hints.setCacheHint({ maxAge, scope: 'PUBLIC' });
              }
            },
          };
        },
      };
    },
  };
}

/** A type of the bank's catalogue: hinted `scope: PUBLIC` with the catalogue's maxAge. */
function isCatalogueType(info: GraphQLResolveInfo, hints: ResolveInfoCacheControl, typename: unknown, maxAge: number): boolean {
  const type = typeof typename === 'string' ? info.schema.getType(typename) : undefined;
  if (!isCompositeType(type)) return false;
  const hint = hints.cacheHintFromType(type);
  return hint?.scope === 'PUBLIC' && hint.maxAge === maxAge;
}
