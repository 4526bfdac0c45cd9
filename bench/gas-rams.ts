import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { RAMS_TYPES } from "../service/domains/rams/typed-data";
import type { ContractTransactionResponse } from "ethers";

/** Row names of the RAMS (ERC-8226) gas figures. */
export const RAMS_OPS = {
  grantDirect: "RAMS grantMandate (direct by the principal, one action)",
  grantSigned: "RAMS grantMandate (principal's EIP-712 signature, relayed, one action)",
  directTransferFrom: "direct transferFrom by an approved spender (existing recipient)",
  executeFirst: "RAMS executor execute(transferFrom) (existing recipient, first use of the mandate)",
  execute: "RAMS executor execute(transferFrom) (existing recipient, mandate already used)",
  revoke: "RAMS revokeMandate (direct by the principal)",
  extend: "RAMS extendMandate (direct by the principal)",
  setOperator: "RAMS setOperator (direct by the principal)",
  invalidateNonces: "RAMS invalidateNonces (the principal voids its outstanding signatures)",
  freeze: "RAMS freezeAgent (enforcer)",
} as const;

/**
 * An executor transfer costs at most this much more than the direct transferFrom. It was 40 000 while the registry
 * checked compliance at grant only (39 609 measured); asking the mandate's compliance provider at every execution
 * (issue 48: a principal revoked there must stop its agents on chain) adds about 12 300 (the mandate's identityRef
 * slot, the provider's account and its two slots, cold in canExecute, then warm again in recordExecution), less the
 * 1 900 the executor's transient reentrancy guard saves: 50 033 measured, hence 51 000.
 */
export const RAMS_EXECUTE_OVERHEAD_TARGET = 51_000n;

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

/**
 * Deploys the RAMS registry, compliance provider and executor with a plain OpenZeppelin ERC-20 on the in-process
 * Hardhat network, sets the executor up (executor deployed, RECORDER_ROLE granted to it, transferFrom registered at
 * amount index 2, the principal's max approval to it, ENFORCER_ROLE on an account other than the admin, the principal
 * made eligible), then measures each operation from its receipt. The baseline is a transferFrom by a spender the
 * principal approved for max, like the executor, to a recipient that already holds tokens, in the same run.
 * `ratio` is gas / that baseline. Two execute rows, the first execution under a fresh mandate and the next one: the
 * registry keeps a cumulative cap below 2^128 and its running total in one storage word, so the first execution pays
 * no zero-to-non-zero write and both rows should match; a difference between them flags a regression.
 * Both execute rows include the compliance read: `canExecute` and `recordExecution` each ask the mandate's provider
 * `checkPrincipal` (the first time cold). The lifecycle rows include the principal's nonce, which every direct call
 * consumes too (the first one a zero-to-non-zero write: the direct grant; the later ones a non-zero rewrite).
 * `ramsExecuteOverhead` gives execute − direct transferFrom, to compare with RAMS_EXECUTE_OVERHEAD_TARGET.
 */
export async function measureRamsGas(
  hre: HardhatRuntimeEnvironment,
): Promise<{ operation: string; gas: bigint; ratio: number }[]> {
  const { ethers } = hre;
  const [admin, complianceOwner, executorOwner, enforcer, principal, agent, agent2, recipient, spender, relayer] =
    await ethers.getSigners();
  const unit = 10n ** 18n;
  const amount = 10n * unit;
  const identityRef = ethers.id("bench-principal");

  const token = await ethers.deployContract("PlainERC20", [principal.address, 1_000_000n * unit]);
  const mandate = await ethers.deployContract("AgentMandate", [admin.address]);
  const compliance = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
  const tokenAddress = await token.getAddress();
  const mandateAddress = await mandate.getAddress();

  // Executor set-up, in the documented order.
  const executor = await ethers.deployContract("AgentExecutor", [
    mandateAddress,
    principal.address,
    executorOwner.address,
  ]);
  const executorAddress = await executor.getAddress();
  await (await mandate.connect(admin).grantRole(await mandate.RECORDER_ROLE(), executorAddress)).wait();
  const transferFrom = token.interface.getFunction("transferFrom").selector;
  await (await executor.connect(executorOwner).setAction(transferFrom, true, true, 2)).wait();
  await (await token.connect(principal).approve(executorAddress, ethers.MaxUint256)).wait();
  await (await mandate.connect(admin).grantRole(await mandate.ENFORCER_ROLE(), enforcer.address)).wait();
  await (await compliance.connect(complianceOwner).grantPrincipal(principal.address, identityRef, 0)).wait();

  // The baseline's spender has the same kind of allowance as the executor; the recipient already holds tokens.
  await (await token.connect(principal).approve(spender.address, ethers.MaxUint256)).wait();
  await (await token.connect(principal).transfer(recipient.address, unit)).wait();

  const complianceAddress = await compliance.getAddress();
  const latest = await ethers.provider.getBlock("latest");
  if (!latest) throw new Error("no latest block");
  const now = BigInt(latest.timestamp);
  const params = (agentAddress: string, deadline: bigint) => ({
    agent: agentAddress,
    validFrom: 0n,
    validUntil: now + 30n * 86_400n,
    principal: principal.address,
    complianceProvider: complianceAddress,
    identityRef,
    asset: tokenAddress,
    maxTransactionValue: 1_000n * unit,
    maxCumulativeValue: 100_000n * unit,
    metadata: ethers.ZeroHash,
    actions: [ethers.zeroPadBytes(transferFrom, 32)],
    deadline,
  });

  const grantDirect = await gasOf(mandate.connect(principal).grantMandate(params(agent.address, 0n), "0x"));

  const signedParams = params(agent2.address, now + 3_600n);
  const { chainId } = await ethers.provider.getNetwork();
  const signature = await principal.signTypedData(
    { name: "RAMS", version: "1", chainId, verifyingContract: mandateAddress },
    { GrantMandate: [...RAMS_TYPES.GrantMandate] },
    { ...signedParams, nonce: await mandate.nonces(principal.address) },
  );
  const grantSigned = await gasOf(mandate.connect(relayer).grantMandate(signedParams, signature));

  const directTransferFrom = await gasOf(
    token.connect(spender).transferFrom(principal.address, recipient.address, amount),
  );
  const call = token.interface.encodeFunctionData("transferFrom", [principal.address, recipient.address, amount]);
  const executeFirst = await gasOf(executor.connect(agent).execute(tokenAddress, call));
  const execute = await gasOf(executor.connect(agent).execute(tokenAddress, call));

  const revoke = await gasOf(mandate.connect(principal).revokeMandate(agent2.address, principal.address, 0n, "0x"));
  const extend = await gasOf(
    mandate.connect(principal).extendMandate(agent.address, principal.address, now + 60n * 86_400n, 0n, "0x"),
  );
  const setOperator = await gasOf(
    mandate.connect(principal).setOperator(principal.address, relayer.address, true, 0n, "0x"),
  );
  const invalidateNonces = await gasOf(
    mandate.connect(principal).invalidateNonces((await mandate.nonces(principal.address)) + 1n),
  );
  const freeze = await gasOf(mandate.connect(enforcer).freezeAgent(agent.address));

  const row = (operation: string, gas: bigint) => ({
    operation,
    gas,
    ratio: Number(gas) / Number(directTransferFrom),
  });
  return [
    row(RAMS_OPS.grantDirect, grantDirect),
    row(RAMS_OPS.grantSigned, grantSigned),
    row(RAMS_OPS.directTransferFrom, directTransferFrom),
    row(RAMS_OPS.executeFirst, executeFirst),
    row(RAMS_OPS.execute, execute),
    row(RAMS_OPS.revoke, revoke),
    row(RAMS_OPS.extend, extend),
    row(RAMS_OPS.setOperator, setOperator),
    row(RAMS_OPS.invalidateNonces, invalidateNonces),
    row(RAMS_OPS.freeze, freeze),
  ];
}

/** Gas of the steady-state executor transfer minus the direct transferFrom, from `measureRamsGas`'s rows. */
export function ramsExecuteOverhead(rows: { operation: string; gas: bigint }[]): bigint {
  const gasOf = (operation: string) => {
    const row = rows.find((r) => r.operation === operation);
    if (!row) throw new Error(`missing row: ${operation}`);
    return row.gas;
  };
  return gasOf(RAMS_OPS.execute) - gasOf(RAMS_OPS.directTransferFrom);
}
