/**
 * The schema's bank-call prices: Federation's demand-control directives (`@cost`, `@listSize`), read
 * once from the built schema's SDL nodes, so the subgraph enforces exactly what the router is told.
 */
import {
  getNamedType,
  isObjectType,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';

/** How many items a list field is assumed to hold: its `@listSize` arguments. */
export interface ListSize {
  assumedSize?: number | undefined;
  /** Arguments whose value caps the list (`first`, `limit`); the largest given one wins. */
  slicingArguments?: readonly string[] | undefined;
}

/** The prices of one schema. Unpriced fields and types cost nothing: they make no bank call. */
export interface PriceList {
  /** `@cost(weight:)` of `Type.field`, else of the type it returns; `undefined` when neither is priced. */
  fieldWeight(parentType: string, fieldName: string): number | undefined;
  /** `@cost(weight:)` on an object type: what resolving one reference of it costs (`_entities`). */
  typeWeight(typeName: string): number | undefined;
  listSize(parentType: string, fieldName: string): ListSize | undefined;
}

// Imported through `@link(… import: ["@cost", "@listSize"])`; the namespaced names when not imported.
const COST = new Set(['cost', 'federation__cost']);
const LIST_SIZE = new Set(['listSize', 'federation__listSize']);

/** Reads every `@cost` and `@listSize` of `schema` (they survive `buildSubgraphSchema` on the AST nodes). */
export function readPrices(schema: GraphQLSchema): PriceList {
  const typeWeights = new Map<string, number>();
  const fieldWeights = new Map<string, number>();
  const listSizes = new Map<string, ListSize>();

  for (const type of Object.values(schema.getTypeMap())) {
    const typeWeight = weightOf(directivesOf(type));
    if (typeWeight !== undefined) typeWeights.set(type.name, typeWeight);
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const directives = field.astNode?.directives ?? [];
      const key = `${type.name}.${field.name}`;
      const weight = weightOf(directives);
      if (weight !== undefined) fieldWeights.set(key, weight);
      const size = listSizeOf(directives);
      if (size !== undefined) listSizes.set(key, size);
    }
  }

  return {
    fieldWeight(parentType, fieldName) {
      const own = fieldWeights.get(`${parentType}.${fieldName}`);
      if (own !== undefined) return own;
      const parent = schema.getType(parentType);
      const field = isObjectType(parent) ? parent.getFields()[fieldName] : undefined;
      return field === undefined ? undefined : typeWeights.get(getNamedType(field.type).name);
    },
    typeWeight: (typeName) => typeWeights.get(typeName),
    listSize: (parentType, fieldName) => listSizes.get(`${parentType}.${fieldName}`),
  };
}

function directivesOf(type: GraphQLNamedType): readonly ConstDirectiveNode[] {
  return [...(type.astNode?.directives ?? []), ...type.extensionASTNodes.flatMap((node) => node.directives ?? [])];
}

function weightOf(directives: readonly ConstDirectiveNode[]): number | undefined {
  const cost = directives.find((directive) => COST.has(directive.name.value));
  const weight = cost === undefined ? undefined : argument(cost, 'weight');
  return typeof weight === 'number' ? weight : undefined;
}

function listSizeOf(directives: readonly ConstDirectiveNode[]): ListSize | undefined {
  const directive = directives.find((d) => LIST_SIZE.has(d.name.value));
  if (directive === undefined) return undefined;
  const assumedSize = argument(directive, 'assumedSize');
  const slicing = argument(directive, 'slicingArguments');
  return {
    assumedSize: typeof assumedSize === 'number' ? assumedSize : undefined,
    slicingArguments: Array.isArray(slicing) ? slicing.filter((name) => typeof name === 'string') : undefined,
  };
}

function argument(directive: ConstDirectiveNode, name: string): unknown {
  const node = directive.arguments?.find((arg) => arg.name.value === name);
  return node === undefined ? undefined : valueFromASTUntyped(node.value);
}
