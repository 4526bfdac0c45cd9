import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { ContractTransactionResponse } from "ethers";
import type { GasRow } from "./gas";

/** Row names of the agent benchmark, for bench/run.ts and readers of its results. */
export const AGENT_OPS = {
  plainExisting: "plain ERC20 transfer (existing recipient)",
  registerURI: "ERC-8004 register(agentURI) (~80-char https URI, new owner)",
  registerBare: "ERC-8004 register() (no URI, new owner)",
  feedbackFirst: "ERC-8004 giveFeedback (first of a new client, short tags, URI)",
  feedbackSecond: "ERC-8004 giveFeedback (second by the same client)",
  revoke: "ERC-8004 revokeFeedback",
  respond: "ERC-8004 appendResponse (first response of a responder)",
  setWallet: "ERC-8004 setAgentWallet (EIP-712, EOA signature)",
  agentTokenNew: "agent token transfer (new recipient)",
  agentTokenExisting: "agent token transfer (existing recipient)",
} as const;

/** A typical registration-file URI (79 characters). */
const AGENT_URI = "https://agents.example.com/.well-known/agent-registration/weather-bot-0001.json";

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

/**
 * Deploys the ERC-8004 registries, an AgentToken made by AgentTokenFactory and a plain OZ ERC-20 on the in-process
 * Hardhat network and measures, from receipts, the agent operations. Each row is taken in a steady state: the
 * registry already holds an agent and the agent already has a client, so the one-time first-use storage writes of
 * the contracts are not charged to the measured call. `ratio` = gas / plain ERC-20 transfer to an existing holder.
 */
export async function measureAgentGas(hre: HardhatRuntimeEnvironment): Promise<GasRow[]> {
  const { ethers } = hre;
  const [deployer, agentOwner, otherOwner, bareOwner, warmClient, client, responder, wallet, holder, newHolder] =
    await ethers.getSigners();
  const unit = 10n ** 18n;

  // Baseline: a plain OpenZeppelin ERC-20 transfer to an existing holder.
  const plain = await ethers.deployContract("PlainERC20", [holder.address, 1_000_000n * unit]);
  await (await plain.connect(holder).transfer(otherOwner.address, unit)).wait();
  const plainExisting = await gasOf(plain.connect(holder).transfer(otherOwner.address, unit));

  const identity = await ethers.deployContract("IdentityRegistry");
  const reputation = await ethers.deployContract("ReputationRegistry", [await identity.getAddress()]);

  // Warm-up: agent 0 exists, so the id counter is no longer zero.
  await (await identity.connect(deployer)["register(string)"](AGENT_URI)).wait();
  const registerURI = await gasOf(identity.connect(agentOwner)["register(string)"](AGENT_URI));
  const agentId = 1n;
  if ((await identity.ownerOf(agentId)) !== agentOwner.address) throw new Error("unexpected agent id");
  const registerBare = await gasOf(identity.connect(bareOwner)["register()"]());

  const rate = (who: typeof client, value: bigint) =>
    reputation
      .connect(who)
      .giveFeedback(
        agentId,
        value,
        0,
        "quality",
        "speed",
        "https://agent.example/mcp",
        "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
        ethers.id("feedback"),
      );
  await (await rate(warmClient, 90n)).wait(); // the agent already has a client
  const feedbackFirst = await gasOf(rate(client, 85n));
  const feedbackSecond = await gasOf(rate(client, 95n));
  const revoke = await gasOf(reputation.connect(client).revokeFeedback(agentId, 2n));
  const respond = await gasOf(
    reputation
      .connect(responder)
      .appendResponse(
        agentId,
        client.address,
        1n,
        "ipfs://bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
        ethers.id("response"),
      ),
  );

  const { chainId } = await ethers.provider.getNetwork();
  const latest = await ethers.provider.getBlock("latest");
  if (!latest) throw new Error("no block");
  const deadline = BigInt(latest.timestamp) + 240n;
  const signature = await wallet.signTypedData(
    { name: "ERC8004IdentityRegistry", version: "1", chainId, verifyingContract: await identity.getAddress() },
    {
      AgentWalletSet: [
        { name: "agentId", type: "uint256" },
        { name: "newWallet", type: "address" },
        { name: "owner", type: "address" },
        { name: "deadline", type: "uint256" },
      ],
    },
    { agentId, newWallet: wallet.address, owner: agentOwner.address, deadline },
  );
  const setWallet = await gasOf(
    identity.connect(agentOwner).setAgentWallet(agentId, wallet.address, deadline, signature),
  );

  // Agent token: a clone made by the factory, preminted to the agent's wallet.
  const implementation = await ethers.deployContract("AgentToken");
  const factory = await ethers.deployContract("AgentTokenFactory", [await implementation.getAddress()]);
  const tokenAddress = await factory.createAgentToken.staticCall(
    "Weather Bot",
    "WBOT",
    18,
    holder.address,
    1_000_000n * unit,
  );
  await (await factory.createAgentToken("Weather Bot", "WBOT", 18, holder.address, 1_000_000n * unit)).wait();
  const token = await ethers.getContractAt("AgentToken", tokenAddress);
  await (await token.connect(holder).transfer(otherOwner.address, unit)).wait(); // otherOwner becomes a holder
  const agentTokenExisting = await gasOf(token.connect(holder).transfer(otherOwner.address, unit));
  const agentTokenNew = await gasOf(token.connect(holder).transfer(newHolder.address, unit));

  const ratio = (gas: bigint) => Math.round((Number(gas) / Number(plainExisting)) * 1000) / 1000;
  const rows: Array<[string, bigint]> = [
    [AGENT_OPS.plainExisting, plainExisting],
    [AGENT_OPS.registerURI, registerURI],
    [AGENT_OPS.registerBare, registerBare],
    [AGENT_OPS.feedbackFirst, feedbackFirst],
    [AGENT_OPS.feedbackSecond, feedbackSecond],
    [AGENT_OPS.revoke, revoke],
    [AGENT_OPS.respond, respond],
    [AGENT_OPS.setWallet, setWallet],
    [AGENT_OPS.agentTokenNew, agentTokenNew],
    [AGENT_OPS.agentTokenExisting, agentTokenExisting],
  ];
  return rows.map(([operation, gas]) => ({ operation, gas, ratio: ratio(gas) }));
}
