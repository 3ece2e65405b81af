/**
 * How many bank calls an operation may make, priced by the schema's `@cost` / `@listSize` and by the
 * length of id lists (id-list-prices.ts), and what its store reads cost in the same units
 * (store-reads.ts), before anything runs. Fields are merged by response key as execution merges them; `@skip`/`@include` are
 * counted as if included (the estimate must not be talked down); a list multiplies what is below it.
 * Raw bodies are counted apart, and each root field pays one unit per `rawBodiesPerUnit` of them it returns.
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
import { isRawBodyField, RAW_BODIES_PER_UNIT, referenceReadPrice, storeListSize, storeReadPrice, type Owner } from './store-reads.ts';

/** A list without `@listSize` counts as this many items (the schema test keeps priced lists sized). */
export const DEFAULT_LIST_SIZE = 1;

export interface CostQuery {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The request's variables as sent (slicing arguments and `_entities` representations may live there). */
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** What resolving something costs: budget units (bank calls, store reads), and the raw bodies it returns, priced at its root field. */
interface Cost {
  units: number;
  rawBodies: number;
}
const FREE: Cost = { units: 0, rawBodies: 0 };
const plus = (a: Cost, b: Cost): Cost => ({ units: a.units + b.units, rawBodies: a.rawBodies + b.rawBodies });
const times = (count: number, cost: Cost): Cost => ({ units: count * cost.units, rawBodies: count * cost.rawBodies });

/**
 * The estimated bank calls and store reads of `operation`: a valid operation of `schema` is assumed.
 * `rawBodiesPerUnit`: how many raw bodies one unit pays for (store-reads.ts `rawBodiesPerUnit`).
 */
export function estimateBankCalls(
  schema: GraphQLSchema,
  prices: PriceList,
  query: CostQuery,
  rawBodiesPerUnit = RAW_BODIES_PER_UNIT,
): number {
  const root = schema.getRootType(query.operation.operation);
  if (root === undefined || root === null) return 0;
  const estimator = new Estimator(schema, prices, query);
  let total = 0;
  // Each root field (a page, a read by id, `_entities`) pays for the raw bodies it returns.
  for (const nodes of collectFields(schema, estimator.fragments, root, [query.operation.selectionSet]).values()) {
    const { units, rawBodies } = estimator.fieldCost(root, nodes, undefined);
    total += units + Math.ceil(rawBodies / rawBodiesPerUnit);
  }
  return total;
}

/** One operation's walk; every cost is of one resolution of what it is given. */
class Estimator {
  private readonly schema: GraphQLSchema;
  private readonly prices: PriceList;
  readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly variables: Record<string, unknown>;

  constructor(schema: GraphQLSchema, prices: PriceList, query: CostQuery) {
    this.schema = schema;
    this.prices = prices;
    this.variables = { ...query.variables };
    for (const definition of query.document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  /** `sets` resolved once on `type`, the value of `owner`'s field (whose arguments may size its lists). */
  selectionCost(type: GraphQLObjectType, sets: readonly SelectionSetNode[], owner: Owner | undefined): Cost {
    let total = FREE;
    for (const nodes of collectFields(this.schema, this.fragments, type, sets).values())
      total = plus(total, this.fieldCost(type, nodes, owner));
    return total;
  }

  /** `nodes` (one response key) resolved once under `parent`, with everything below it. */
  fieldCost(parent: GraphQLObjectType, nodes: readonly FieldNode[], owner: Owner | undefined): Cost {
    const node = nodes[0]!;
    const name = node.name.value;
    const field = parent.getFields()[name];
    // Introspection and __typename never reach the bank.
    if (name.startsWith('__') || field === undefined) return FREE;
    if (isRawBodyField(parent.name, name)) return { units: 0, rawBodies: 1 };
    const sets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
    if (parent === this.schema.getQueryType() && name === '_entities') return this.entitiesCost(field, node, sets);
    const args = argumentsOf(field, node, this.variables);
    const weight: Cost = {
      units:
        (this.prices.fieldWeight(parent.name, name) ?? 0) + storeReadPrice(parent.name, name, args) + idListPrice(parent.name, name, args),
      rawBodies: 0,
    };
    if (sets.length === 0) return weight;
    const below = this.childrenCost(getNamedType(field.type), sets, { parentType: parent.name, fieldName: name, args });
    return plus(weight, times(this.itemCount(parent, field, node, owner), below));
  }

  private childrenCost(type: GraphQLNamedType, sets: readonly SelectionSetNode[], owner: Owner): Cost {
    if (isObjectType(type)) return this.selectionCost(type, sets, owner);
    if (!isAbstractType(type)) return FREE;
    // Whichever member the value turns out to be, count the dearest (in units, then in raw bodies).
    const costs = this.schema.getPossibleTypes(type).map((member) => this.selectionCost(member, sets, owner));
    return costs.reduce(
      (dearest, cost) =>
        cost.units > dearest.units || (cost.units === dearest.units && cost.rawBodies > dearest.rawBodies) ? cost : dearest,
      FREE,
    );
  }

  /**
   * The router's entity fetch: each representation resolves a reference (`@cost` on its type) and
   * then its selection, and references read from the store cost their reads. The count comes from
   * the request itself, so 500 references cost 500.
   */
  private entitiesCost(field: GraphQLField<unknown, unknown>, node: FieldNode, sets: readonly SelectionSetNode[]): Cost {
    const representations = argumentsOf(field, node, this.variables).representations;
    const counts = new Map<string, number>();
    for (const representation of Array.isArray(representations) ? (representations as unknown[]) : []) {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (typeof typename === 'string') counts.set(typename, (counts.get(typename) ?? 0) + 1);
    }
    let total = FREE;
    for (const [typename, count] of counts) {
      const type = this.schema.getType(typename);
      if (!isObjectType(type)) continue;
      const each = plus({ units: this.prices.typeWeight(typename) ?? 0, rawBodies: 0 }, this.selectionCost(type, sets, undefined));
      total = plus(total, plus(times(count, each), { units: referenceReadPrice(typename, count), rawBodies: 0 }));
    }
    return total;
  }

  /**
   * Items of a list field: as many as the store fills it with at most, where that is known from its
   * owner's arguments (store-reads.ts); else the largest slicing argument given, else `assumedSize`, else the default.
   */
  private itemCount(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, node: FieldNode, owner: Owner | undefined): number {
    if (!isListType(isNonNullType(field.type) ? field.type.ofType : field.type)) return 1;
    const filled = storeListSize(owner, parent.name, field.name);
    if (filled !== undefined) return filled;
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
