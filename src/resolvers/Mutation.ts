import type { MutationResolvers } from '../__generated__/resolvers-types.ts';
import { badUserInput } from '../errors.ts';
import * as valid from '../validation.ts';

export const Mutation: MutationResolvers = {
  merchantLogin: (_, { email, password }, { bank }) =>
    bank.wallet.login({ email: valid.email(email), password: valid.required(password, 'password') }),
  merchantLogout: async (_, { accessToken, refreshToken }, { bank }) => {
    await bank.wallet.logout({
      accessToken: valid.required(accessToken, 'accessToken'),
      refreshToken: valid.required(refreshToken, 'refreshToken'),
    });
    return true;
  },
  merchantForgotPassword: (_, { email }, { bank }) => bank.wallet.forgotPassword(valid.email(email)),
  merchantResetPassword: (_, { resetCode, password }, { bank }) =>
    bank.wallet.resetPassword({
      resetCode: valid.required(resetCode, 'resetCode'),
      password: valid.required(password, 'password'),
    }),
  merchantRefreshSession: (_, { refreshToken }, { bank }) => bank.wallet.refreshSession(valid.required(refreshToken, 'refreshToken')),

  reviewQuarantinedDelivery: async (_, { id, note }, { quarantine, caller }) => {
    const reviewedBy = caller.kind === 'verified' ? (caller.subject ?? null) : null;
    const result = await quarantine.review({ id, note: valid.note(note), reviewedBy, reviewedAt: new Date().toISOString() });
    if (result.status === 'already-reviewed')
      throw badUserInput('id', `was reviewed at ${result.delivery.reviewedAt}; a review is recorded once.`);
    return result.status === 'reviewed' ? result.delivery : null;
  },

  reconcileCollections: (_, { recover, ...lists }, { reconciliation }) =>
    reconciliation.reconcile(valid.transferIds(lists), recover ?? 'NONE'),
  decideConfirmation: (_, { settlementId, decision, reason }, { confirmationDecisions }) =>
    confirmationDecisions.decide(
      valid.settlementId(settlementId),
      decision,
      valid.note(reason, 'reason', 'must say why (where the transfer was found, or what the bank said); it may not be blank.'),
    ),

  transactionAuthorize: (_, { redirectUri }, { bank }) => bank.transaction.authorize(valid.redirectUri(redirectUri)),
  transactionToken: (_, { code, redirectUri }, { bank }) =>
    bank.transaction.exchangeCode({ code: valid.required(code, 'code'), redirectUri: valid.redirectUri(redirectUri) }),
};
