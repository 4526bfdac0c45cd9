import { approve, burnToken, transferFrom, transferTo } from "./tokenization/transfers";
import { claimDividends, dividendDistribution } from "./tokenization/dividends";
import { mintToken } from "./tokenization/mint-token";
import { newTokenization } from "./tokenization/new-tokenization";
import { whitelist } from "./tokenization/whitelist";
import { freezeAddress, freezeTokens, unfreezeTokens } from "./tokenization/freezes";
import { forcedTransfer } from "./tokenization/forced-transfer";
import { recoverWallet } from "./tokenization/recover-wallet";
import { cancelWalletRecovery, executeWalletRecovery } from "./tokenization/wallet-recovery-steps";
import { acceptTokenizer, cancelTokenizerTransfer, transferTokenizer } from "./tokenization/tokenizer-handover";
import { cancelTokenUpgrade, executeTokenUpgrade, scheduleTokenUpgrade } from "./tokenization/token-upgrades";
import { pauseToken, unpauseToken } from "./tokenization/pause";
import { grantTokenRole, revokeTokenRole } from "./tokenization/token-roles";
import { resolveOfferingClaim } from "./sto/resolve-offering-claim";
import { claimTokens } from "./sto/claim-tokens";
import { closeOffer, withdrawProceeds } from "./sto/close-offer";
import { newInvest } from "./sto/new-invest";
import { newSto } from "./sto/new-sto";
import { agentAppendFeedbackResponse } from "./agents/agent-append-feedback-response";
import { agentApproveToken } from "./agents/agent-approve-token";
import { agentBurnToken } from "./agents/agent-burn-token";
import { agentCreateToken } from "./agents/agent-create-token";
import { agentGiveFeedback } from "./agents/agent-give-feedback";
import { agentMintToken } from "./agents/agent-mint-token";
import { agentRegister } from "./agents/agent-register";
import { agentRevokeFeedback } from "./agents/agent-revoke-feedback";
import { agentSetMetadata } from "./agents/agent-set-metadata";
import { agentSetURI } from "./agents/agent-set-uri";
import { agentSetWallet } from "./agents/agent-set-wallet";
import { agentTransferFromToken } from "./agents/agent-transfer-from-token";
import { agentTransferOwnership } from "./agents/agent-transfer-ownership";
import { agentTransferToken } from "./agents/agent-transfer-token";
import { ramsExecute } from "./rams/rams-execute";
import { ramsExtendMandate } from "./rams/rams-extend-mandate";
import { ramsFreezeAgent } from "./rams/rams-freeze-agent";
import { ramsGrantMandate } from "./rams/rams-grant-mandate";
import { ramsGrantPrincipal } from "./rams/rams-grant-principal";
import { ramsInvalidateNonces } from "./rams/rams-invalidate-nonces";
import { ramsRevokeMandate } from "./rams/rams-revoke-mandate";
import { ramsRevokePrincipal } from "./rams/rams-revoke-principal";
import { ramsSetExecutorAction } from "./rams/rams-set-executor-action";
import { ramsSetOperator } from "./rams/rams-set-operator";
import { ramsUnfreezeAgent } from "./rams/rams-unfreeze-agent";
import { faucetBkn } from "./faucet-bkn";
import type { MethodDefinition } from "./types";

/** Every prepare method. Adding a method is one module and one line here. */
export const METHODS: MethodDefinition[] = [
  newTokenization,
  mintToken,
  whitelist,
  burnToken,
  transferTo,
  transferFrom,
  approve,
  dividendDistribution,
  claimDividends,
  freezeTokens,
  unfreezeTokens,
  freezeAddress,
  forcedTransfer,
  recoverWallet,
  cancelWalletRecovery,
  executeWalletRecovery,
  transferTokenizer,
  acceptTokenizer,
  cancelTokenizerTransfer,
  scheduleTokenUpgrade,
  cancelTokenUpgrade,
  executeTokenUpgrade,
  pauseToken,
  unpauseToken,
  grantTokenRole,
  revokeTokenRole,
  newSto,
  newInvest,
  claimTokens,
  closeOffer,
  withdrawProceeds,
  resolveOfferingClaim,
  agentRegister,
  agentSetURI,
  agentSetMetadata,
  agentSetWallet,
  agentTransferOwnership,
  agentGiveFeedback,
  agentRevokeFeedback,
  agentAppendFeedbackResponse,
  agentCreateToken,
  agentMintToken,
  agentBurnToken,
  agentTransferToken,
  agentTransferFromToken,
  agentApproveToken,
  ramsGrantPrincipal,
  ramsRevokePrincipal,
  ramsGrantMandate,
  ramsRevokeMandate,
  ramsExtendMandate,
  ramsSetOperator,
  ramsInvalidateNonces,
  ramsExecute,
  ramsSetExecutorAction,
  ramsFreezeAgent,
  ramsUnfreezeAgent,
  faucetBkn,
];

/** Methods a client may name on /prepare-transactions. */
export const PUBLIC_METHODS = METHODS.filter((m) => !m.internal);

const byName = new Map<string, MethodDefinition>();
for (const method of METHODS) {
  byName.set(method.name, method);
  for (const alias of method.aliases ?? []) byName.set(alias, method);
}

export function findMethod(name: string): MethodDefinition | undefined {
  return byName.get(name);
}

export function findPublicMethod(name: string): MethodDefinition | undefined {
  const method = byName.get(name);
  return method && !method.internal ? method : undefined;
}

/**
 * The method a /prepare-transactions body means. The published CLI sends `tx prepare --method mintToken|burnToken` as
 * agentMintToken / agentBurnToken carrying the security-token fields (docs/wire-conventions.md, What existing clients
 * send): a body that names a tokenSymbol and no tokenAddress is the security-token method it meant.
 */
export function methodForBody(name: string, body: unknown): MethodDefinition | undefined {
  const method = findPublicMethod(name);
  const fields = (body ?? {}) as Record<string, unknown>;
  const meantSecurityToken = fields.tokenSymbol !== undefined && fields.tokenAddress === undefined;
  if (method === agentMintToken && meantSecurityToken && fields.userToMint !== undefined) return mintToken;
  if (method === agentBurnToken && meantSecurityToken) return burnToken;
  return method;
}
