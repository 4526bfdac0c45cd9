import type { Interface } from "ethers";
import {
  agentExecutorInterface,
  agentMandateInterface,
  agentTokenFactoryInterface,
  agentTokenInterface,
  complianceProviderInterface,
  identityRegistryInterface,
  reputationRegistryInterface,
  usdcInterface,
} from "../../chains/contracts";
import {
  anything,
  equal,
  fields,
  pinned,
  same,
  unitsOf,
  type ArgCheck,
  type ExpectedCall,
  type IntentContext,
  type IntentTable,
} from "./intent";

/**
 * The intents of the agent, agent-token and RAMS methods (intent.ts says what an intent is). Registries are the pinned
 * deployment's unless the request names its own (RAMS takes agentMandateAddress, complianceProviderAddress,
 * executorAddress); agent tokens are the request's tokenAddress, amounts in their decimals.
 */

const GAS = { deploy: 5_000_000n, write: 1_500_000n, call: 400_000n };

const call = (
  abi: Interface,
  to: string,
  contract: string,
  fn: string,
  args: Record<string, ArgCheck>,
  gas = GAS.call,
): ExpectedCall => ({
  abi,
  to: to.toLowerCase(),
  contract,
  fn,
  args,
  gas,
});

/** The agentId the request names, when it names one (by agentUuid, the service knows it). */
const agentIdOf = (b: { agentId?: string }): ArgCheck =>
  b.agentId === undefined ? anything : equal(BigInt(b.agentId), "the agentId asked");

async function identity(ctx: IntentContext): Promise<string> {
  return pinned(await ctx.contracts(), "IdentityRegistry");
}
async function reputation(ctx: IntentContext): Promise<string> {
  return pinned(await ctx.contracts(), "ReputationRegistry");
}

/** An agent-token call on the request's token, its amount in the token's decimals. */
function tokenCall(fn: string, args: (b: any, units: bigint) => Record<string, ArgCheck>) {
  return {
    movesValue: true,
    async calls(b: any, ctx: IntentContext) {
      const decimals = await ctx.agentTokenDecimals(b.tokenAddress, b.decimals);
      const units = unitsOf(b.amount, decimals);
      return [call(agentTokenInterface, b.tokenAddress, "the agent token", fn, args(b, units))];
    },
  };
}

const amountIs = (units: bigint, b: { amount: string }) => equal(units, `the ${b.amount} asked`);

/** The registry of a RAMS request: its own agentMandateAddress, or the chain's. */
async function mandates(b: { agentMandateAddress?: string }, ctx: IntentContext): Promise<string> {
  return b.agentMandateAddress ?? pinned(await ctx.contracts(), "AgentMandate");
}

/** The signature path's arguments: the request's signature and deadline, or (direct) the empty signature and 0. */
const signedArgs = (b: { signature?: string; deadline?: number }) => ({
  deadline: equal(BigInt(b.deadline ?? 0), "the deadline asked"),
  signature: equal(b.signature ?? "0x", "the signature given"),
});

export const AGENT_INTENTS: IntentTable = {
  agentRegister: {
    movesValue: false,
    async calls(_b, ctx) {
      return [
        call(
          identityRegistryInterface,
          await identity(ctx),
          "the IdentityRegistry",
          "register",
          { agentURI: anything },
          GAS.write,
        ),
      ];
    },
  },
  agentSetURI: {
    movesValue: false,
    async calls(b, ctx) {
      return [
        call(
          identityRegistryInterface,
          await identity(ctx),
          "the IdentityRegistry",
          "setAgentURI",
          { agentId: agentIdOf(b), newURI: anything },
          GAS.write,
        ),
      ];
    },
  },
  agentSetMetadata: {
    movesValue: false,
    async calls(b, ctx) {
      const keys = [
        b.metadataKey,
        b.aiModelName !== undefined ? "aiModelName" : undefined,
        b.aiModelProvider !== undefined ? "aiModelProvider" : undefined,
      ].filter(Boolean);
      const registry = await identity(ctx);
      return keys.map((key) =>
        call(
          identityRegistryInterface,
          registry,
          "the IdentityRegistry",
          "setMetadata",
          { agentId: agentIdOf(b), metadataKey: equal(key, `the key ${key}`), metadataValue: anything },
          GAS.write,
        ),
      );
    },
  },
  agentSetWallet: {
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(identityRegistryInterface, await identity(ctx), "the IdentityRegistry", "setAgentWallet", {
          agentId: agentIdOf(b),
          newWallet: same(b.newWallet, "the wallet asked"),
          deadline: equal(BigInt(b.deadline), "the deadline asked"),
          signature: equal(b.signature, "the signature given"),
        }),
      ];
    },
  },
  agentTransferOwnership: {
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(identityRegistryInterface, await identity(ctx), "the IdentityRegistry", "transferFrom", {
          from: same(ctx.wallet, "this wallet"),
          to: same(b.newOwner, "the new owner asked"),
          tokenId: agentIdOf(b),
        }),
      ];
    },
  },
  agentGiveFeedback: {
    movesValue: false,
    async calls(b, ctx) {
      return [
        call(
          reputationRegistryInterface,
          await reputation(ctx),
          "the ReputationRegistry",
          "giveFeedback",
          { agentId: agentIdOf(b) },
          GAS.write,
        ),
      ];
    },
  },
  agentRevokeFeedback: {
    movesValue: false,
    async calls(b, ctx) {
      return [
        call(reputationRegistryInterface, await reputation(ctx), "the ReputationRegistry", "revokeFeedback", {
          agentId: agentIdOf(b),
          feedbackIndex: equal(BigInt(b.feedbackIndex), "the feedback asked"),
        }),
      ];
    },
  },
  agentAppendFeedbackResponse: {
    movesValue: false,
    async calls(b, ctx) {
      return [
        call(
          reputationRegistryInterface,
          await reputation(ctx),
          "the ReputationRegistry",
          "appendResponse",
          {
            agentId: agentIdOf(b),
            clientAddress: same(b.clientAddress, "the client asked"),
            feedbackIndex: equal(BigInt(b.feedbackIndex), "the feedback asked"),
          },
          GAS.write,
        ),
      ];
    },
  },
  agentCreateToken: {
    movesValue: true,
    async calls(b, ctx) {
      const decimals = Number(b.decimals);
      return [
        call(
          agentTokenFactoryInterface,
          pinned(await ctx.contracts(), "AgentTokenFactory"),
          "the AgentTokenFactory",
          "createAgentToken",
          {
            name: equal(b.name, "the name asked"),
            symbol: equal(b.symbol ?? b.tokenSymbol, "the symbol asked"),
            decimals: equal(decimals, "the decimals asked"),
            agentWallet: same(b.agentWallet, "the agent wallet asked"),
            premint: equal(unitsOf(b.premint, decimals), `the premint of ${b.premint}`),
          },
          GAS.deploy,
        ),
      ];
    },
  },
  agentMintToken: tokenCall("mint", (b, units) => ({
    to: same(b.to ?? b.recipientAddress, "the recipient asked"),
    amount: amountIs(units, b),
  })),
  agentBurnToken: tokenCall("burn", (b, units) => ({ amount: amountIs(units, b) })),
  agentTransferToken: tokenCall("transfer", (b, units) => ({
    to: same(b.to ?? b.recipientAddress, "the recipient asked"),
    value: amountIs(units, b),
  })),
  agentTransferFromToken: tokenCall("transferFrom", (b, units) => ({
    from: same(b.from, "the holder asked"),
    to: same(b.to ?? b.recipientAddress, "the recipient asked"),
    value: amountIs(units, b),
  })),
  agentApproveToken: tokenCall("approve", (b, units) => ({
    spender: same(b.spenderAddress ?? b.spender, "the spender asked"),
    value: amountIs(units, b),
  })),

  ramsGrantPrincipal: {
    movesValue: true,
    async calls(b, ctx) {
      const provider = b.complianceProviderAddress ?? pinned(await ctx.contracts(), "ComplianceProvider");
      return [
        call(complianceProviderInterface, provider, "the ComplianceProvider", "grantPrincipal", {
          principal: same(b.principal, "the principal asked"),
          identityRef: equal(b.identityRef, "the identityRef asked"),
          expiresAt: equal(BigInt(b.expiresAt ?? 0), "the expiry asked"),
        }),
      ];
    },
  },
  ramsRevokePrincipal: {
    movesValue: true,
    async calls(b, ctx) {
      const provider = b.complianceProviderAddress ?? pinned(await ctx.contracts(), "ComplianceProvider");
      return [
        call(complianceProviderInterface, provider, "the ComplianceProvider", "revokePrincipal", {
          principal: same(b.principal, "the principal asked"),
          reason: b.reason === undefined ? anything : equal(BigInt(b.reason), "the reason asked"),
        }),
      ];
    },
  },
  ramsGrantMandate: {
    movesValue: true,
    async calls(b, ctx) {
      const provider =
        b.complianceProvider ?? b.complianceProviderAddress ?? pinned(await ctx.contracts(), "ComplianceProvider");
      const params = fields({
        agent: same(b.agent, "the agent asked"),
        principal: same(b.principal, "the principal asked"),
        asset: same(b.asset, "the asset asked"),
        complianceProvider: same(provider, "the compliance provider"),
        validFrom: equal(BigInt(b.validFrom ?? 0), "the validFrom asked"),
        validUntil: equal(BigInt(b.validUntil), "the validUntil asked"),
        identityRef: equal(b.identityRef, "the identityRef asked"),
        maxTransactionValue: equal(BigInt(b.maxTransactionValue), "the transaction cap asked"),
        maxCumulativeValue: equal(BigInt(b.maxCumulativeValue), "the cumulative cap asked"),
        metadata: b.metadata === undefined ? anything : equal(b.metadata, "the metadata asked"),
        actions: (v) => (JSON.stringify(v) === JSON.stringify(b.actions) ? undefined : "are not the actions asked"),
        deadline: equal(BigInt(b.deadline ?? 0), "the deadline asked"),
      });
      return [
        call(
          agentMandateInterface,
          await mandates(b, ctx),
          "the AgentMandate registry",
          "grantMandate",
          { params, signature: equal(b.signature ?? "0x", "the signature given") },
          GAS.write,
        ),
      ];
    },
  },
  ramsRevokeMandate: {
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(agentMandateInterface, await mandates(b, ctx), "the AgentMandate registry", "revokeMandate", {
          agent: same(b.agent, "the agent asked"),
          principal: same(b.principal, "the principal asked"),
          ...signedArgs(b),
        }),
      ];
    },
  },
  ramsExtendMandate: {
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(agentMandateInterface, await mandates(b, ctx), "the AgentMandate registry", "extendMandate", {
          agent: same(b.agent, "the agent asked"),
          principal: same(b.principal, "the principal asked"),
          newValidUntil: equal(BigInt(b.newValidUntil), "the validUntil asked"),
          ...signedArgs(b),
        }),
      ];
    },
  },
  ramsSetOperator: {
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(agentMandateInterface, await mandates(b, ctx), "the AgentMandate registry", "setOperator", {
          principal: same(b.principal, "the principal asked"),
          operator: same(b.operator, "the operator asked"),
          approved: equal(b.approved, "the approval asked"),
          ...signedArgs(b),
        }),
      ];
    },
  },
  ramsExecute: {
    movesValue: true,
    async calls(b, ctx) {
      const executor = ctx.executor(b.principal ?? b.from ?? "", b.executorAddress, ctx.firstTarget);
      const inner =
        b.target !== undefined
          ? {
              target: same(b.target, "the target asked"),
              data: equal(String(b.data).toLowerCase(), "the calldata asked"),
            }
          : {
              target: same(b.asset, "the asset asked"),
              data: equal(
                usdcInterface.encodeFunctionData("transferFrom", [b.from, b.to, BigInt(b.amount)]).toLowerCase(),
                `transferFrom(${b.from}, ${b.to}, ${b.amount})`,
              ),
            };
      return [call(agentExecutorInterface, executor, "the principal's AgentExecutor", "execute", inner)];
    },
  },
  ramsSetExecutorAction: {
    movesValue: true,
    async calls(b, ctx) {
      const executor = ctx.executor(b.principal ?? "", b.executorAddress, ctx.firstTarget);
      const selector = (b.selector ?? String(b.action).slice(0, 10)).toLowerCase();
      return [
        call(agentExecutorInterface, executor, "the principal's AgentExecutor", "setAction", {
          selector: equal(selector, "the selector asked"),
          supported: equal(b.supported, "the support asked"),
          hasAmount: equal(b.hasAmount ?? false, "hasAmount asked"),
          amountIndex: equal(BigInt(b.amountIndex ?? 0), "the amountIndex asked"),
        }),
      ];
    },
  },
  ramsInvalidateNonces: {
    // It voids signatures that grant or change rights: asked for like the writes it cancels.
    movesValue: true,
    async calls(b, ctx) {
      return [
        call(agentMandateInterface, await mandates(b, ctx), "the AgentMandate registry", "invalidateNonces", {
          // Unset, the service picks the current nonce + 1; a higher one only voids more of the principal's own
          // unused signatures.
          newNonce: b.newNonce === undefined ? anything : equal(BigInt(b.newNonce), "the newNonce asked"),
        }),
      ];
    },
  },
  ramsFreezeAgent: freeze("freezeAgent"),
  ramsUnfreezeAgent: freeze("unfreezeAgent"),
};

function freeze(fn: "freezeAgent" | "unfreezeAgent") {
  return {
    movesValue: true,
    async calls(b: { agent: string; agentMandateAddress?: string }, ctx: IntentContext) {
      return [
        call(agentMandateInterface, await mandates(b, ctx), "the AgentMandate registry", fn, {
          agent: same(b.agent, "the agent asked"),
        }),
      ];
    },
  };
}
