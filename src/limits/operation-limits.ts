/**
 * Everything an operation must pass before it runs, in one place for HTTP and WebSocket alike:
 * the document limits (parse, validation), one credential-bearing mutation at most, the
 * introspection policy, and the bank-call estimate against `MAX_OPERATION_COST`.
 */
import {
  NoSchemaIntrospectionCustomRule,
  type DocumentNode,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import { costEstimatedTooExpensive } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { estimateBankCalls, type CostQuery } from './cost-estimate.ts';
import { oneCredentialMutationRule } from './credential-mutations.ts';
import { documentLimitRules, limitedParseOptions } from './document-limits.ts';
import { readPrices } from './prices.ts';
import { RAW_BODIES_PER_UNIT } from './store-reads.ts';

export interface OperationLimits {
  /** For graphql-js `parse`: the token limit. */
  parseOptions: ParseOptions;
  /** Added to graphql-js's specified rules: aliases, depth, directives, credential-bearing mutations, and introspection where it is off. */
  validationRules: ValidationRule[];
  /** `COST_ESTIMATED_TOO_EXPENSIVE` when the (validated) operation is priced over the budget. */
  refuseTooExpensive(
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Readonly<Record<string, unknown>> | null | undefined,
  ): GraphQLError | undefined;
}

/**
 * The limits for `schema`, whose prices are read once here. `introspection: false` refuses
 * `__schema` and `__type` on every transport alike (`_service` stays answered: the router reads the
 * SDL through it).
 */
export function createOperationLimits(
  schema: GraphQLSchema,
  {
    maxCost,
    introspection,
    logger,
    rawBodiesPerUnit = RAW_BODIES_PER_UNIT,
  }: {
    maxCost: number;
    introspection: boolean;
    logger: Logger;
    /** How many raw bodies one unit pays for (store-reads.ts `rawBodiesPerUnit`, from WEBHOOK_MAX_BODY_BYTES). */
    rawBodiesPerUnit?: number;
  },
): OperationLimits {
  const prices = readPrices(schema);
  // Apollo hands the same parsed document to every request with the same text, so an operation that
  // declares no variables (its price cannot change) is walked once, not once per request.
  const fixedPrices = new WeakMap<OperationDefinitionNode, number>();
  const estimate = (document: DocumentNode, operation: OperationDefinitionNode, variables: CostQuery['variables']) => {
    if (operation.variableDefinitions?.length)
      return estimateBankCalls(schema, prices, { document, operation, variables }, rawBodiesPerUnit);
    let price = fixedPrices.get(operation);
    if (price === undefined)
      fixedPrices.set(operation, (price = estimateBankCalls(schema, prices, { document, operation }, rawBodiesPerUnit)));
    return price;
  };
  const rules = [...documentLimitRules(), oneCredentialMutationRule(schema)];
  return {
    parseOptions: limitedParseOptions,
    validationRules: introspection ? rules : [...rules, NoSchemaIntrospectionCustomRule],
    refuseTooExpensive(document, operation, variables) {
      const estimated = estimate(document, operation, variables);
      if (estimated <= maxCost) return undefined;
      // Worth an operator's eye (a client asking for too much, or a budget set too low); no document text.
      logger.warn(
        { operationName: operation.name?.value, estimated, max: maxCost },
        'operation refused: its estimated bank calls exceed MAX_OPERATION_COST',
      );
      return costEstimatedTooExpensive(estimated, maxCost);
    },
  };
}
