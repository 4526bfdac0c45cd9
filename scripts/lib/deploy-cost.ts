import { Contract, formatEther, formatUnits, getBytes, type Signer } from "ethers";
import { deployState, suiteSteps, type DeployOptions } from "./deploy-suite";

/** Gas set aside for each RAMS role transaction after the contracts (grantRole, transferOwnership: ~30-55k each). */
export const ROLE_TRANSACTION_GAS = 100_000n;

/** The OP Stack's GasPriceOracle predeploy (Base, Base Sepolia): the L1 data fee a transaction will pay on top of its gas. */
const GAS_PRICE_ORACLE = "0x420000000000000000000000000000000000000F";

export interface DeployEstimate {
  chainId: number;
  /** The contracts left to deploy (none when a complete deployment is on chain) and the gas each needs. */
  contracts: { name: string; gas: bigint }[];
  roleTransactions: number;
  gas: bigint;
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** What each transaction will offer at most per gas (ethers: 2 × base fee + tip). */
  maxFeePerGas: bigint;
  /** The OP Stack L1 data fee of the deployment transactions (0 elsewhere). */
  l1Fee: bigint;
  /** gas × (base fee + tip) + L1 fee: what the deployment costs if fees stay where they are. */
  expectedCost: bigint;
  /** gas × max fee + L1 fee: what the deployer must hold, since a node wants gas limit × max fee up front. */
  requiredBalance: bigint;
}

/** Calldata for an address whose bytes are all non-zero costs at most 20 × (16 − 4) gas more than the stand-in's. */
const STAND_IN_HEADROOM_GAS = 20n * 12n;

/**
 * When one stand-in fills two arguments (the factory's token and escrow implementations), the second finds its account
 * warm and its storage slot written: the real, distinct address costs at most a cold account (2,600 − 100) and a fresh
 * slot (22,100 − 100) more.
 */
const REPEATED_STAND_IN_HEADROOM_GAS = 2_500n + 22_000n;

/**
 * A contract every chain since Dencun holds (EIP-4788's beacon roots contract; OP Stack chains have it since Ecotone,
 * Hardhat since Cancun): an address with code, for a constructor that checks its argument is a contract.
 */
const STAND_IN = "0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02";

/**
 * What deploying the rest of the suite with `deployer` will cost on its chain now: each contract's deployment
 * transaction is estimated by the node (eth_estimateGas, with {@link STAND_IN} standing in for a contract that is not
 * deployed yet, since the token factory's constructor refuses an implementation without code; with headroom for the
 * real address's calldata), plus {@link ROLE_TRANSACTION_GAS} per
 * RAMS role to hand out, priced at the node's current fees; on an OP Stack chain the L1 data fee is added from the
 * GasPriceOracle's upper bound.
 */
export async function estimateDeployment(
  deployer: Signer,
  options: DeployOptions & { roleTransactions?: number },
): Promise<DeployEstimate> {
  const provider = deployer.provider!;
  const state = await deployState(deployer, options);
  const from = await deployer.getAddress();
  const contracts: DeployEstimate["contracts"] = [];
  const standIn = (await provider.getCode(STAND_IN)) !== "0x" ? STAND_IN : from;
  let l1Fee = 0n;
  if (!state.complete) {
    for (const step of suiteSteps(state)) {
      const known = state.progress[step.name];
      if (known && (await provider.getCode(known)) !== "0x") continue;
      const given = step.args(state.progress, from);
      const stoodIn = given.filter((value) => value === undefined).length;
      const tx = await new step.factory(deployer).getDeployTransaction(...given.map((value) => value ?? standIn));
      // The real address may have fewer zero bytes than the stand-in: each of its 20 bytes can cost 12 gas more.
      const headroom =
        BigInt(stoodIn) * STAND_IN_HEADROOM_GAS + BigInt(Math.max(0, stoodIn - 1)) * REPEATED_STAND_IN_HEADROOM_GAS;
      const gas = (await provider.estimateGas({ ...tx, from })) + headroom;
      contracts.push({ name: step.name, gas });
      l1Fee += await l1DataFee(deployer, getBytes(tx.data).length);
    }
  }
  const roleTransactions = options.roleTransactions ?? 0;
  const gas = contracts.reduce((sum, c) => sum + c.gas, 0n) + BigInt(roleTransactions) * ROLE_TRANSACTION_GAS;
  const [fees, block] = await Promise.all([provider.getFeeData(), provider.getBlock("latest")]);
  const baseFeePerGas = block?.baseFeePerGas ?? fees.gasPrice ?? 0n;
  const maxPriorityFeePerGas = fees.maxPriorityFeePerGas ?? 0n;
  const maxFeePerGas = fees.maxFeePerGas ?? fees.gasPrice ?? baseFeePerGas * 2n + maxPriorityFeePerGas;
  return {
    chainId: state.chainId,
    contracts,
    roleTransactions,
    gas,
    baseFeePerGas,
    maxPriorityFeePerGas,
    maxFeePerGas,
    l1Fee,
    expectedCost: gas * (baseFeePerGas + maxPriorityFeePerGas) + l1Fee,
    requiredBalance: gas * maxFeePerGas + l1Fee,
  };
}

/** The L1 data fee's upper bound for a transaction carrying `dataBytes` on an OP Stack chain; 0 where there is no oracle. */
async function l1DataFee(signer: Signer, dataBytes: number): Promise<bigint> {
  const oracle = new Contract(
    GAS_PRICE_ORACLE,
    ["function getL1FeeUpperBound(uint256 unsignedTxSize) view returns (uint256)"],
    signer.provider,
  );
  try {
    // The unsigned transaction: the data plus ~100 bytes of type, chain id, nonce, fees, gas, value and access list.
    return (await oracle.getL1FeeUpperBound(dataBytes + 100)) as bigint;
  } catch {
    return 0n;
  }
}

export class InsufficientDeployerFunds extends Error {}

/** One paragraph a developer can act on: what the deployment needs, what the deployer holds, what to send. */
export function describeEstimate(estimate: DeployEstimate, networkName: string, currency: string): string {
  const gwei = (wei: bigint) => `${Number(formatUnits(wei, "gwei")).toPrecision(3)} gwei`;
  const eth = (wei: bigint) => `${Number(formatEther(wei)).toPrecision(3)} ${currency}`;
  if (estimate.gas === 0n) return `${networkName} (chain ${estimate.chainId}): nothing left to deploy`;
  const l1 = estimate.l1Fee > 0n ? ` + ${eth(estimate.l1Fee)} L1 data fee` : "";
  return (
    `${networkName} (chain ${estimate.chainId}): ${estimate.contracts.length} contract(s) and ${estimate.roleTransactions} role transaction(s), ` +
    `${estimate.gas.toLocaleString("en-US")} gas; at the base fee of ${gwei(estimate.baseFeePerGas)} + ${gwei(estimate.maxPriorityFeePerGas)} tip about ` +
    `${eth(estimate.expectedCost)}${l1}; the deployer must hold ${eth(estimate.requiredBalance)} (max fee ${gwei(estimate.maxFeePerGas)} per gas, in case the base fee doubles)`
  );
}

/** Refuses (throws {@link InsufficientDeployerFunds}) when `balance` is below what the deployment needs up front. */
export function checkDeployerBalance(
  estimate: DeployEstimate,
  deployer: string,
  balance: bigint,
  networkName: string,
  currency: string,
): void {
  if (balance >= estimate.requiredBalance) return;
  const eth = (wei: bigint) => `${formatEther(wei)} ${currency}`;
  throw new InsufficientDeployerFunds(
    `The deployer ${deployer} holds ${eth(balance)} on ${networkName} (chain ${estimate.chainId}), not enough to deploy: ` +
      `${describeEstimate(estimate, networkName, currency)}. Send at least ${eth(estimate.requiredBalance - balance)} more to ${deployer} ` +
      `(a faucet on a testnet), then run the deploy again. Nothing was sent.`,
  );
}
