import { maybeCacheControlFromInfo, type ResolveInfoCacheControl } from '@apollo/cache-control-types';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControl } from '@apollo/server/plugin/cacheControl';
import { isCompositeType, type GraphQLResolveInfo } from 'graphql';

/**
 * Apollo's cache-control plugin, then the bank catalogue's TTL. The SDL marks `Bank` and
 * `BillCategory` `@cacheControl(scope: PUBLIC)` with no maxAge, since the SDL cannot read
 * `BANK_LIST_TTL_S`; here every public hint without a maxAge gets that TTL, so a CDN or the
 * router's entity cache keeps them exactly as long as the subgraph itself does. Everything else
 * keeps Apollo's default of 0 (`no-store`), and one personal field makes the whole response so.
 *
 * Apollo's plugin is listed explicitly, after ours, because the order matters: Apollo Server calls
 * `willResolveField` in reverse plugin order, so its plugin sets each field's static hint first and
 * ours then gives the public ones their maxAge; its field-end hook then applies the default of 0.
 */
export function cacheHintPlugins<C extends object>(catalogueMaxAgeS: number): ApolloServerPlugin<C>[] {
  return [catalogueMaxAge(catalogueMaxAgeS), ApolloServerPluginCacheControl({ defaultMaxAge: 0 })];
}

function catalogueMaxAge<C extends object>(maxAge: number): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async executionDidStart() {
          return {
            willResolveField({ info, args }) {
              const hints = maybeCacheControlFromInfo(info);
              if (hints === null) return;
              if (info.fieldName === '_entities' && info.parentType === info.schema.getQueryType()) {
                // The router's entity fetch: public for the TTL only when every entity asked for is.
                const { representations } = args as { representations?: { __typename?: unknown }[] };
                if (representations?.length && representations.every((r) => isCatalogueType(info, hints, r.__typename))) {
                  hints.setCacheHint({ maxAge });
                }
                return;
              }
              if (hints.cacheHint.scope === 'PUBLIC' && hints.cacheHint.maxAge === undefined) hints.setCacheHint({ maxAge });
            },
          };
        },
      };
    },
  };
}

/** A type hinted `scope: PUBLIC` with no maxAge of its own: the bank's catalogue. */
function isCatalogueType(info: GraphQLResolveInfo, hints: ResolveInfoCacheControl, typename: unknown): boolean {
  const type = typeof typename === 'string' ? info.schema.getType(typename) : undefined;
  if (!isCompositeType(type)) return false;
  const hint = hints.cacheHintFromType(type);
  return hint?.scope === 'PUBLIC' && hint.maxAge === undefined;
}
