import { getAddress, Interface } from "ethers";
import { ACCESS } from "../../auth/access-rules";
import {
  agentExecutorInterface,
  agentMandateInterface,
  complianceProviderInterface,
  parseEventLog,
} from "../../chains/contracts";
import type { Chain } from "../../chains/registry";
import { badRequest, preflightError } from "../../errors";
import type { ConfirmedBatch, MethodContext } from "../types";
import { ZERO_BYTES32 } from "./fields";
import {
  ramsTypedData,
  recoverSigner,
  typedDataDigest,
  type RamsPrimaryType,
  type RamsTypedData,
} from "../../domains/rams/typed-data";
import type { Queryable } from "../../store/db";
import { recordAgentActivity } from "../agents/common";
import { emitEvents } from "../../events/emit";
import type { NewEvent } from "../../events/types";
import { mandateAt, onChain, RAMS_CHAIN_ID, requireDeadline, type ContractRef } from "../../domains/rams/on-chain";

/** What every RAMS method's definition shares: chain, access, facade defaults, signer rule. */
export const ramsMethod = {
  area: "rams" as const,
  chains: [RAMS_CHAIN_ID],
  defaultChainId: () => RAMS_CHAIN_ID,
  access: ACCESS.agenticWrite,
  facadeMode: "client-signed" as const,
  facadeEnvelope: "data" as const,
  signerOf: (b: { signerAddress?: string }) => {
    if (!b.signerAddress)
      throw badRequest("signerAddress is required for a client-signed prepare", { field: "signerAddress" });
    return b.signerAddress;
  },
};

/** execute, set-executor-action, freeze, unfreeze, grant-principal and revoke-principal are always client-signed. */
export function requireClientSigned(ctx: MethodContext, name: string): string {
  if (ctx.executionMode === "service-relayed") {
    throw badRequest(`${name} is always client-signed: the role holder signs it; service-relayed is refused`, {
      field: "executionMode",
    });
  }
  return ctx.signer!;
}

// ---------------------------------------------------------------------------------------------------------------
// Contracts and on-chain reads
// ---------------------------------------------------------------------------------------------------------------
// Mandates
// ---------------------------------------------------------------------------------------------------------------
// Compliance
// ---------------------------------------------------------------------------------------------------------------
// Execution checks (GET /rams/can-execute and ramsExecute's pre-check)
// ---------------------------------------------------------------------------------------------------------------
// Authorisation of the four signable operations

export interface Authorization {
  mode: "direct" | "signature";
  /** The transaction's sender: the signer of a client-signed prepare or the service's relayer. */
  sender: string;
  /** "0x" in direct mode. */
  signature: string;
  /** 0 in direct mode. */
  deadline: bigint;
  /** The principal's EIP-712 nonce now; the call consumes it, direct or signed (docs/rams.md, Two signing flows). */
  nonce: bigint;
}

export interface AuthorizationInput {
  registry: ContractRef;
  principal: string;
  signature?: string;
  deadline?: number;
  primaryType: RamsPrimaryType;
  /** The typed-data message for a nonce and deadline (the same parameters the call encodes). */
  message: (nonce: bigint, deadline: bigint) => RamsTypedData["message"];
  /** Revoke and extend: an operator the principal approved may send them directly. */
  operatorMayAct: boolean;
  /** What the call does, for messages ("revoke the mandate"). */
  action: string;
}

/**
 * Direct mode: the sender is the principal (or, for revoke and extend, an operator it approved); signature encoded 0x,
 * deadline 0. Signature mode: the principal's EIP-712 signature over these parameters, the current nonce and the
 * deadline, checked here before anything is returned or paid (a contract principal is left to the simulation, which
 * runs its ERC-1271 check); any sender, including the service's relayer. Relayed mode requires signature mode.
 */
export async function authorize(ctx: MethodContext, input: AuthorizationInput): Promise<Authorization> {
  const { chain } = ctx;
  const sender = getAddress(ctx.signer!);
  const signature = input.signature && input.signature !== "0x" ? input.signature : undefined;
  requireRelayedSignature(ctx, input, input.primaryType);
  const nonce = await onChain(chain, input.registry, "nonces", () =>
    mandateAt(chain, input.registry).nonces(input.principal),
  );
  if (!signature) {
    if (sender === getAddress(input.principal)) return { mode: "direct", sender, signature: "0x", deadline: 0n, nonce };
    if (
      input.operatorMayAct &&
      (await onChain(chain, input.registry, "isOperator", () =>
        mandateAt(chain, input.registry).isOperator(input.principal, sender),
      ))
    ) {
      return { mode: "direct", sender, signature: "0x", deadline: 0n, nonce };
    }
    const who = input.operatorMayAct
      ? `the principal ${input.principal} nor an operator it approved`
      : `the principal ${input.principal}`;
    throw preflightError(
      `signerAddress ${sender} is not ${who}: only they may ${input.action} directly (or send the principal's EIP-712 signature with its deadline)`,
      {
        field: "signerAddress",
        principal: input.principal,
      },
    );
  }
  if (input.deadline === undefined)
    throw badRequest("deadline is required with signature: send the deadline that was signed", { field: "deadline" });
  const deadline = BigInt(input.deadline);
  await requireDeadline(chain, input.deadline);
  const typedData = ramsTypedData(
    input.primaryType,
    chain.chainId,
    input.registry.address,
    input.message(nonce, deadline),
  );
  const recovered = recoverSigner(typedData, signature);
  if (recovered !== getAddress(input.principal)) {
    // A contract principal (ERC-1271 wallet) is asked on-chain, as the registry's SignatureChecker will ask it.
    const isContract = (await chain.provider.getCode(input.principal)) !== "0x";
    if (!isContract || !(await isValidSignatureOf(chain, input.principal, typedDataDigest(typedData), signature))) {
      throw badRequest(
        `signature is not the principal ${input.principal}'s EIP-712 ${input.primaryType} signature over these parameters, its current nonce ${nonce} and deadline ${deadline}` +
          (recovered && !isContract
            ? ` (it was signed by ${recovered})`
            : isContract
              ? " (its ERC-1271 isValidSignature refuses it)"
              : ""),
        {
          field: "signature",
          expectedSigner: input.principal,
          recoveredSigner: recovered ?? null,
          contractWallet: isContract,
          nonce: nonce.toString(),
          typedData,
        },
      );
    }
  }
  return { mode: "signature", sender, signature, deadline, nonce };
}

const erc1271 = new Interface(["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"]);
const ERC1271_MAGIC = "0x1626ba7e";

/** ERC-1271: whether the contract `wallet` accepts `signature` over `digest` (a revert or another answer: no). */
async function isValidSignatureOf(chain: Chain, wallet: string, digest: string, signature: string): Promise<boolean> {
  try {
    const result = await chain.provider.call({
      to: wallet,
      data: erc1271.encodeFunctionData("isValidSignature", [digest, signature]),
    });
    return (
      result.length === 66 && result.slice(0, 10).toLowerCase() === ERC1271_MAGIC && /^0{56}$/.test(result.slice(10))
    );
  } catch {
    return false;
  }
}

/**
 * Relayed mode only for a signature-authorised call: the signature and the deadline it was signed with. Checked
 * before anything is read from the chain.
 */
export function requireRelayedSignature(
  ctx: MethodContext,
  b: { signature?: string; deadline?: number },
  primaryType: RamsPrimaryType,
): void {
  if (ctx.executionMode !== "service-relayed") return;
  const signature = b.signature && b.signature !== "0x" ? b.signature : undefined;
  if (!signature || b.deadline === undefined) {
    throw badRequest(
      `service-relayed mode needs the principal's EIP-712 signature and its deadline (fetch the payload from GET /rams/typed-data/${kebab(primaryType)}); otherwise prepare it client-signed`,
      { field: signature ? "deadline" : "signature" },
    );
  }
}

const kebab = (primaryType: string) => primaryType.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();

/** The info every RAMS prepare answers with: the contract, the authorisation mode and the principal's EIP-712 nonce. */
export function authInfo(contract: string, auth: Authorization) {
  return {
    contract,
    mode: auth.mode,
    eip712Nonce: auth.nonce.toString(),
    ...(auth.mode === "signature" ? { deadline: auth.deadline.toString() } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Simulation and revert reasons
// ---------------------------------------------------------------------------------------------------------------
// Executors
// ---------------------------------------------------------------------------------------------------------------
// Receipts

/**
 * The contracts whose events a confirmed RAMS batch may report: those its transactions called (the registry, the
 * compliance provider, the executor: checked as this version's own at prepare) and the registry an execution recorded
 * on. A contract an execution called on its way (the raw target) is none of them: what it emits is not a RAMS event.
 */
function emittersOf(batch: ConfirmedBatch): Set<string> {
  const emitters = new Set(batch.receipts.map((r) => r.to?.toLowerCase()).filter((a): a is string => !!a));
  const registry = (batch.record as { execution?: { registry?: string } }).execution?.registry;
  if (registry) emitters.add(registry.toLowerCase());
  return emitters;
}

/** The RAMS events of a confirmed batch, decoded (integers as decimal strings), from its own contracts only: its outcome. */
export function ramsEvents(
  batch: ConfirmedBatch,
): { contract: string; event: string; args: Record<string, unknown> }[] {
  const events = [];
  const emitters = emittersOf(batch);
  for (const receipt of batch.receipts) {
    for (const log of receipt.logs) {
      if (!emitters.has(log.address.toLowerCase())) continue;
      for (const iface of [agentMandateInterface, complianceProviderInterface, agentExecutorInterface]) {
        let parsed;
        try {
          parsed = parseEventLog(iface, log);
        } catch {
          parsed = null;
        }
        if (!parsed) continue;
        const args = Object.fromEntries(
          parsed.fragment.inputs.map((input, i) => [input.name, jsonValue(parsed.args[i])]),
        );
        events.push({ contract: getAddress(log.address), event: parsed.name, args });
        break;
      }
    }
  }
  return events;
}

function jsonValue(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(jsonValue);
  return v;
}

/**
 * The outcome of a confirmed RAMS batch: its events. When an event names an agent wallet that is also the wallet of
 * an ERC-8004 agent registered here, the batch joins that agent's history (category rams).
 */
export async function ramsOutcome(tx: Queryable, batch: ConfirmedBatch): Promise<Record<string, unknown>> {
  const events = ramsEvents(batch);
  const wallets = [...new Set(events.map((e) => e.args.agent).filter((a): a is string => typeof a === "string"))];
  const agent = wallets.length ? await batch.services.agents.byWallet(wallets, tx) : undefined;
  if (agent)
    await recordAgentActivity(
      tx,
      batch,
      { agentUuid: agent.uuid, category: "rams" },
      { agentWallet: agent.agentWallet, events },
    );
  await emitEvents(tx, mandateEvents(batch, events));
  return { events };
}

/**
 * mandate.granted / .revoked / .executed from the registry's events of a confirmed batch (the key's: a relayed batch
 * has none, and its txId's subscribers get its outcome in batch.completed).
 */
function mandateEvents(batch: ConfirmedBatch, events: ReturnType<typeof ramsEvents>): NewEvent[] {
  const envelope = {
    apiKeyId: batch.apiKeyId,
    txId: batch.txId,
    chainId: batch.chain.chainId,
    hash: batch.receipts.at(-1)?.hash ?? null,
  };
  const out: NewEvent[] = [];
  for (const e of events) {
    const a = e.args as Record<string, string>;
    const pair = {
      chainId: batch.chain.chainId,
      agentMandateAddress: e.contract,
      agent: a.agent,
      principal: a.principal,
    };
    if (e.event === "MandateGranted") {
      const actions = events
        .filter(
          (x) =>
            x.event === "ActionEnabled" &&
            x.contract === e.contract &&
            x.args.agent === a.agent &&
            x.args.principal === a.principal,
        )
        .map((x) => String(x.args.action));
      const data = {
        ...pair,
        complianceProvider: a.complianceProvider,
        asset: a.asset,
        validFrom: Number(a.validFrom),
        validUntil: Number(a.validUntil),
        metadata: a.metadata,
        actions,
      };
      out.push({ ...envelope, type: "mandate.granted", data });
    } else if (e.event === "MandateRevoked") {
      out.push({ ...envelope, type: "mandate.revoked", data: { ...pair, revokedBy: a.revokedBy } });
    } else if (e.event === "ExecutionRecorded") {
      out.push({
        ...envelope,
        type: "mandate.executed",
        data: { ...pair, action: a.action, amount: a.amount, cumulativeUsed: a.cumulativeUsed },
      });
    }
  }
  return out;
}

export { ZERO_BYTES32 };
