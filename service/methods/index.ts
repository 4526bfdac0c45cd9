import { approve, burnToken, transferFrom, transferTo } from "./tokenization/transfers";
import { claimDividends, dividendDistribution } from "./tokenization/dividends";
import { mintToken } from "./tokenization/mintToken";
import { newTokenization } from "./tokenization/newTokenization";
import { whitelist } from "./tokenization/whitelist";
import { freezeAddress, freezeTokens, unfreezeTokens } from "./tokenization/freezes";
import { forcedTransfer } from "./tokenization/forcedTransfer";
import { recoverWallet } from "./tokenization/recoverWallet";
import { pauseToken, unpauseToken } from "./tokenization/pause";
import { grantTokenRole, revokeTokenRole } from "./tokenization/tokenRoles";
import { resolveOfferingClaim } from "./sto/resolveOfferingClaim";
import { claimTokens } from "./sto/claimTokens";
import { closeOffer } from "./sto/closeOffer";
import { newInvest } from "./sto/newInvest";
import { newSto } from "./sto/newSto";
import { agentAppendFeedbackResponse } from "./agents/agentAppendFeedbackResponse";
import { agentApproveToken } from "./agents/agentApproveToken";
import { agentBurnToken } from "./agents/agentBurnToken";
import { agentCreateToken } from "./agents/agentCreateToken";
import { agentGiveFeedback } from "./agents/agentGiveFeedback";
import { agentMintToken } from "./agents/agentMintToken";
import { agentRegister } from "./agents/agentRegister";
import { agentRevokeFeedback } from "./agents/agentRevokeFeedback";
import { agentSetMetadata } from "./agents/agentSetMetadata";
import { agentSetURI } from "./agents/agentSetURI";
import { agentSetWallet } from "./agents/agentSetWallet";
import { agentTransferFromToken } from "./agents/agentTransferFromToken";
import { agentTransferOwnership } from "./agents/agentTransferOwnership";
import { agentTransferToken } from "./agents/agentTransferToken";
import { ramsExecute } from "./rams/ramsExecute";
import { ramsExtendMandate } from "./rams/ramsExtendMandate";
import { ramsFreezeAgent } from "./rams/ramsFreezeAgent";
import { ramsGrantMandate } from "./rams/ramsGrantMandate";
import { ramsGrantPrincipal } from "./rams/ramsGrantPrincipal";
import { ramsRevokeMandate } from "./rams/ramsRevokeMandate";
import { ramsRevokePrincipal } from "./rams/ramsRevokePrincipal";
import { ramsSetExecutorAction } from "./rams/ramsSetExecutorAction";
import { ramsSetOperator } from "./rams/ramsSetOperator";
import { ramsUnfreezeAgent } from "./rams/ramsUnfreezeAgent";
import { faucetBkn } from "./faucetBkn";
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
  pauseToken,
  unpauseToken,
  grantTokenRole,
  revokeTokenRole,
  newSto,
  newInvest,
  claimTokens,
  closeOffer,
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
