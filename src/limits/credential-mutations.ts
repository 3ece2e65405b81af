/**
 * One credential-bearing mutation per operation: each of these sends a customer's password, reset
 * code, refresh token or authorization code to the bank, so a document carrying many (aliases, or
 * fragments) would try many guesses in one request, past any per-request limit in front of us.
 */
import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/** The mutations that send a customer's credentials to the bank. */
export const CREDENTIAL_MUTATIONS: readonly string[] = [
  'merchantLogin',
  'merchantResetPassword',
  'merchantForgotPassword',
  'merchantRefreshSession',
  'transactionToken',
];

/**
 * The validation rule refusing an operation with more than one credential-bearing mutation (by
 * response key, aliases and fragments included) before anything runs, on every transport. Throws
 * at build when `schema` lacks one of them: a renamed mutation must not slip out of the limit.
 */
export function oneCredentialMutationRule(schema: GraphQLSchema): ValidationRule {
  const mutation = schema.getMutationType();
  const missing = CREDENTIAL_MUTATIONS.filter((name) => mutation?.getFields()[name] === undefined);
  if (missing.length > 0) throw new Error(`The credential-bearing mutations are not all in the schema: ${missing.join(', ')}`);
  const guarded = new Set(CREDENTIAL_MUTATIONS);

  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      if (operation.operation !== 'mutation') return;
      const fields = new Map<string, FieldNode>();
      collectRootFields(context, operation.selectionSet, guarded, fields, new Set());
      if (fields.size <= 1) return;
      const counts = new Map<string, number>();
      for (const field of fields.values()) counts.set(field.name.value, (counts.get(field.name.value) ?? 0) + 1);
      const named = [...counts].map(([name, count]) => (count === 1 ? name : `${name} ×${count}`)).join(', ');
      context.reportError(
        new GraphQLError(
          `This operation carries ${fields.size} mutations that send a customer's credentials to the bank (${named}); ` +
            'one operation may carry at most one: send each in its own request.',
          { nodes: [...fields.values()] },
        ),
      );
    },
  });
}

/** The guarded root fields of a selection, by response key, through inline fragments and fragment spreads. */
function collectRootFields(
  context: ValidationContext,
  set: SelectionSetNode,
  guarded: ReadonlySet<string>,
  fields: Map<string, FieldNode>,
  spread: Set<string>,
): void {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (guarded.has(selection.name.value)) fields.set(selection.alias?.value ?? selection.name.value, selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectRootFields(context, selection.selectionSet, guarded, fields, spread);
    } else if (!spread.has(selection.name.value)) {
      // Each fragment once: a cycle is graphql-js's own refusal (NoFragmentCyclesRule).
      spread.add(selection.name.value);
      const fragment = context.getFragment(selection.name.value);
      if (fragment !== undefined && fragment !== null) collectRootFields(context, fragment.selectionSet, guarded, fields, spread);
    }
  }
}
