/**
 * Limits on the shape of a GraphQL document, so a hostile one is refused at parse or validation time,
 * before any resolver runs: graphql-js's own token limit while parsing, graphql-armor's rules for
 * aliases, depth and directives while validating. HTTP (Apollo) and WebSocket (graphql-ws) use both.
 */
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { GraphQLError, type ParseOptions, type ValidationContext, type ValidationRule } from 'graphql';

/**
 * Generous enough that real screens (the README's queries) and Apollo Sandbox's introspection query
 * (its depth is not counted) never meet them; small enough that the worst document allowed is cheap
 * to parse and validate, so sending one buys an attacker nothing. docs/schema.md lists them for clients.
 */
export const DOCUMENT_LIMITS = {
  /** Lexical tokens in the whole document (graphql-js `parse({ maxTokens })`). */
  tokens: 5_000,
  /** Aliases in one operation, fragments included. */
  aliases: 100,
  /** Field nesting, fragments flattened, introspection (`__schema`) not counted. */
  depth: 10,
  /** Directive uses (`@skip`, `@include`, …) in one operation. */
  directives: 50,
} as const;

/** Options for graphql-js `parse`: a document longer than the limit fails as a syntax error. */
export const limitedParseOptions: ParseOptions = { maxTokens: DOCUMENT_LIMITS.tokens };

/**
 * The armor rules, reporting into the validation context (graphql-armor throws by default, which
 * Apollo would turn into a 500) so they come back as GRAPHQL_VALIDATION_FAILED like any other rule.
 */
export function documentLimitRules(): ValidationRule[] {
  const report = { propagateOnRejection: false, onReject: [reportTo] };
  return [
    maxAliasesRule({ n: DOCUMENT_LIMITS.aliases, ...report }),
    maxDepthRule({ n: DOCUMENT_LIMITS.depth, flattenFragments: true, ignoreIntrospection: true, ...report }),
    maxDirectivesRule({ n: DOCUMENT_LIMITS.directives, ...report }),
  ] as ValidationRule[];
}

function reportTo(context: ValidationContext | null, error: GraphQLError): void {
  // graphql-armor words every refusal as a "Syntax Error"; these are validation verdicts.
  context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, '')));
}
