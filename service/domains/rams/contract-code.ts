import { getAddress, TypedDataEncoder } from "ethers";
import type { Chain } from "../../chains/registry";
import { ApiError, badRequest } from "../../errors";
import { AgentExecutor__factory } from "../../../typechain-types/factories/contracts/rams/AgentExecutor__factory";

/**
 * Whether a RAMS contract a request names (agentMandateAddress, complianceProviderAddress, executorAddress, an executor's
 * registry) is one of this version's own: its code on chain must be the code of the chain's own AgentMandate or
 * ComplianceProvider, or of an AgentExecutor built from this version's bytecode with the same constructor arguments;
 * or the operator allowed the address (RAMS_ALLOWED_CONTRACTS). Any other contract could answer any check and emit any
 * event (fake mandates in another agent's history): it is refused with 400 naming the field, before anything else is
 * read from it. Answers are kept per chain and address (code does not change).
 */
export type RamsContractLabel = "AgentMandate" | "ComplianceProvider" | "AgentExecutor";

/** What a contract's code is: this version's own, none at all, or another contract's. */
type Verdict = "own" | "no-code" | "other";

const verdicts = new WeakMap<Chain, Map<string, Promise<Verdict>>>();

/** A 32-byte word of `address` as immutables hold it (hex, no 0x). */
const word = (address: string) => address.toLowerCase().replace(/^0x/, "").padStart(64, "0");

/**
 * Code with the values that depend on the contract's own address blanked: the address itself and, for an EIP-712
 * verifier (the registry), its domain separator, both kept as immutables.
 */
function normalized(code: string, chain: Chain, address: string, label: RamsContractLabel): string {
  let hex = code.toLowerCase().replace(/^0x/, "");
  const own = [word(address)];
  if (label === "AgentMandate")
    own.push(
      TypedDataEncoder.hashDomain({
        name: "RAMS",
        version: "1",
        chainId: chain.chainId,
        verifyingContract: address,
      }).slice(2),
    );
  for (const value of own) hex = hex.split(value).join("0".repeat(64));
  return hex;
}

/** The code an AgentExecutor with these constructor arguments has, built from this version's bytecode (an eth_call). */
async function executorCode(chain: Chain, address: string): Promise<string | undefined> {
  const executor = AgentExecutor__factory.connect(address, chain.provider);
  try {
    const [rams, principal, owner] = await Promise.all([executor.rams(), executor.principal(), executor.owner()]);
    const { data } = await new AgentExecutor__factory().getDeployTransaction(rams, principal, owner);
    return await chain.provider.call({ data });
  } catch {
    return undefined; // not an executor at all
  }
}

async function codeVerdict(chain: Chain, address: string, label: RamsContractLabel): Promise<Verdict> {
  const code = await chain.provider.getCode(address);
  if (code === "0x") return "no-code";
  if (label === "AgentExecutor") {
    const expected = await executorCode(chain, address);
    return expected !== undefined && expected.toLowerCase() === code.toLowerCase() ? "own" : "other";
  }
  const reference = chain.deployment.contracts[label];
  if (!reference) return "other";
  const referenceCode = await chain.provider.getCode(reference);
  return normalized(code, chain, address, label) === normalized(referenceCode, chain, reference, label)
    ? "own"
    : "other";
}

/**
 * Refuses (400 naming `field`) a contract a request named that is neither this version's code nor allowed by the
 * operator. The chain's own contracts pass without a look.
 */
export async function assertOwnContract(
  chain: Chain,
  ref: { address: string; label: RamsContractLabel; field?: string },
): Promise<void> {
  const address = getAddress(ref.address);
  const key = address.toLowerCase();
  if (chain.allowedContracts.has(key)) return;
  if (ref.label !== "AgentExecutor" && chain.deployment.contracts[ref.label]?.toLowerCase() === key) return;
  let known = verdicts.get(chain);
  if (!known) verdicts.set(chain, (known = new Map()));
  let verdict = known.get(`${ref.label}:${key}`);
  if (!verdict) {
    verdict = codeVerdict(chain, address, ref.label);
    known.set(`${ref.label}:${key}`, verdict);
    // A chain that could not be asked decides nothing: asked again next time.
    verdict.catch(() => known.delete(`${ref.label}:${key}`));
  }
  let found: Verdict;
  try {
    found = await verdict;
  } catch (error) {
    throw new ApiError(
      "CHAIN_READ_FAILED",
      `Reading the code of ${address} on chain ${chain.chainId} failed: ${(error as Error).message}`,
      { contract: address },
    );
  }
  if (found === "own") return;
  const field = ref.field ?? "contract";
  const why =
    found === "no-code"
      ? "has no contract code"
      : `runs code that is not this version's ${ref.label} (an operator may allow it with RAMS_ALLOWED_CONTRACTS)`;
  throw badRequest(
    `${field} ${address} ${why} on chain ${chain.chainId}: it is not a contract this service works with`,
    { field, contract: address },
  );
}
