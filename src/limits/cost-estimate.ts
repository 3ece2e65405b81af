/**
 * How many bank calls an operation may make, priced by the schema's `@cost` / `@listSize` and by the
 * length of id lists (id-list-prices.ts), and what its store reads cost in the same units
 * (store-reads.ts), before anything runs. Fields are merged by response key as execution merges them; `@skip`/`@include` are
 * counted as if included (the estimate must not be talked down); a list multiplies what is below it.
 */
import {
  getArgumentValues,
  getNamedType,
  isAbstractType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { idListPrice } from './id-list-prices.ts';
import type { PriceList } from './prices.ts';
import { referenceReadPrice, storeReadPrice } from './store-reads.ts';

/** A list without `@listSize` counts as this many items (the schema test keeps priced lists sized). */
export const DEFAULT_LIST_SIZE = 1;

export interface CostQuery {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The request's variables as sent (slicing arguments and `_entities` representations may live there). */
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** The estimated bank calls of `operation`: a valid operation of `schema` is assumed. */
export function estimateBankCalls(schema: GraphQLSchema, prices: PriceList, query: CostQuery): number {
  const root = schema.getRootType(query.operation.operation);
  if (root === undefined || root === null) return 0;
  return new Estimator(schema, prices, query).selectionCost(root, [query.operation.selectionSet]);
}

/** One operation's walk; every cost is of one resolution of what it is given. */
class Estimator {
  private readonly schema: GraphQLSchema;
  private readonly prices: PriceList;
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly variables: Record<string, unknown>;

  constructor(schema: GraphQLSchema, prices: PriceList, query: CostQuery) {
    this.schema = schema;
    this.prices = prices;
    this.variables = { ...query.variables };
    for (const definition of query.document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  selectionCost(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): number {
    let total = 0;
    for (const nodes of collectFields(this.schema, this.fragments, type, sets).values()) total += this.fieldCost(type, nodes);
    return total;
  }

  /** `nodes` (one response key) resolved once under `parent`, with everything below it. */
  private fieldCost(parent: GraphQLObjectType, nodes: readonly FieldNode[]): number {
    const node = nodes[0]!;
    const name = node.name.value;
    const field = parent.getFields()[name];
    // Introspection and __typename never reach the bank.
    if (name.startsWith('__') || field === undefined) return 0;
    const sets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
    if (parent === this.schema.getQueryType() && name === '_entities') return this.entitiesCost(field, node, sets);
    const args = argumentsOf(field, node, this.variables);
    const weight =
      (this.prices.fieldWeight(parent.name, name) ?? 0) + storeReadPrice(parent.name, name, args) + idListPrice(parent.name, name, args);
    if (sets.length === 0) return weight;
    const below = this.childrenCost(getNamedType(field.type), sets);
    return below === 0 ? weight : weight + this.itemCount(parent, field, node) * below;
  }

  private childrenCost(type: GraphQLNamedType, sets: readonly SelectionSetNode[]): number {
    if (isObjectType(type)) return this.selectionCost(type, sets);
    if (!isAbstractType(type)) return 0;
    // Whichever member the value turns out to be, count the dearest.
    return Math.max(0, ...this.schema.getPossibleTypes(type).map((member) => this.selectionCost(member, sets)));
  }

  /**
   * The router's entity fetch: each representation resolves a reference (`@cost` on its type) and
   * then its selection, and references read from the store cost their reads. The count comes from
   * the request itself, so 500 references cost 500.
   */
  private entitiesCost(field: GraphQLField<unknown, unknown>, node: FieldNode, sets: readonly SelectionSetNode[]): number {
    const representations = argumentsOf(field, node, this.variables).representations;
    const counts = new Map<string, number>();
    for (const representation of Array.isArray(representations) ? (representations as unknown[]) : []) {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (typeof typename === 'string') counts.set(typename, (counts.get(typename) ?? 0) + 1);
    }
    let total = 0;
    for (const [typename, count] of counts) {
      const type = this.schema.getType(typename);
      if (isObjectType(type))
        total += count * ((this.prices.typeWeight(typename) ?? 0) + this.selectionCost(type, sets)) + referenceReadPrice(typename, count);
    }
    return total;
  }

  /** Items of a list field: the largest slicing argument given, else `assumedSize`, else the default. */
  private itemCount(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, node: FieldNode): number {
    if (!isListType(isNonNullType(field.type) ? field.type.ofType : field.type)) return 1;
    const size = this.prices.listSize(parent.name, field.name);
    const args = argumentsOf(field, node, this.variables);
    const sliced = (size?.slicingArguments ?? []).map((name) => args[name]).filter((v): v is number => typeof v === 'number');
    if (sliced.length > 0) return Math.max(...sliced);
    return size?.assumedSize ?? DEFAULT_LIST_SIZE;
  }
}

/**
 * The fields of `sets` that apply to `type`, grouped by response key, as graphql-js groups them for
 * execution (a fragment spread once per grouping), but with every `@skip`/`@include` counted in.
 */
function collectFields(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  type: GraphQLObjectType,
  sets: readonly SelectionSetNode[],
  fields = new Map<string, FieldNode[]>(),
  spread = new Set<string>(),
): Map<string, FieldNode[]> {
  const applies = (condition: string | undefined) => {
    if (condition === undefined || condition === type.name) return true;
    const conditionType = schema.getType(condition);
    return conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
  };
  for (const set of sets) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        fields.set(key, [...(fields.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value)) {
          collectFields(schema, fragments, type, [selection.selectionSet], fields, spread);
        }
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (spread.has(name) || fragment === undefined) continue;
        spread.add(name);
        if (applies(fragment.typeCondition.name.value)) {
          collectFields(schema, fragments, type, [fragment.selectionSet], fields, spread);
        }
      }
    }
  }
  return fields;
}

function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: Record<string, unknown>) {
  try {
    return getArgumentValues(field, node, variables);
  } catch {
    // Arguments execution will refuse anyway; nothing to size the list by.
    return {};
  }
}
