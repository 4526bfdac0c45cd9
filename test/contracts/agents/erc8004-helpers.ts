import hre from "hardhat";
import type { Signer, TypedDataDomain } from "ethers";
import type { IdentityRegistry } from "../../../typechain-types";

const { ethers } = hre;

/** EIP-712 type the new agent wallet signs (reference: IdentityRegistryUpgradeable, AGENT_WALLET_SET_TYPEHASH). */
export const AGENT_WALLET_SET_TYPES = {
  AgentWalletSet: [
    { name: "agentId", type: "uint256" },
    { name: "newWallet", type: "address" },
    { name: "owner", type: "address" },
    { name: "deadline", type: "uint256" },
  ],
};

/** A typical registration-file URI (~80 characters). */
export const AGENT_URI = "https://agents.example.com/.well-known/agent-registration/weather-bot-0001.json";

export interface AgentWalletSet {
  agentId: bigint;
  newWallet: string;
  owner: string;
  deadline: bigint;
}

/** The registry's EIP-712 domain, with optional overrides to build wrong domains. */
export async function agentWalletDomain(
  identity: IdentityRegistry,
  overrides: Partial<TypedDataDomain> = {},
): Promise<TypedDataDomain> {
  const { chainId } = await ethers.provider.getNetwork();
  return {
    name: "ERC8004IdentityRegistry",
    version: "1",
    chainId,
    verifyingContract: await identity.getAddress(),
    ...overrides,
  };
}

/** `signer`'s EIP-712 signature of an AgentWalletSet message for `identity`. */
export async function signAgentWallet(
  signer: Signer,
  identity: IdentityRegistry,
  message: AgentWalletSet,
  domainOverrides: Partial<TypedDataDomain> = {},
): Promise<string> {
  return signer.signTypedData(await agentWalletDomain(identity, domainOverrides), AGENT_WALLET_SET_TYPES, message);
}

/** A fresh IdentityRegistry and named signers. */
export async function identityFixture() {
  const [deployer, alice, bob, operator, approved, stranger, walletKey, otherKey, carol] = await ethers.getSigners();
  const identity = await ethers.deployContract("IdentityRegistry");
  return { deployer, alice, bob, operator, approved, stranger, walletKey, otherKey, carol, identity };
}

/**
 * Agent 0 registered by alice with AGENT_URI; `operator` is alice's operator for all her agents and `approved` is
 * the approved address of agent 0.
 */
export async function agentFixture() {
  const base = await identityFixture();
  const { identity, alice, operator, approved } = base;
  await (await identity.connect(alice)["register(string)"](AGENT_URI)).wait();
  await (await identity.connect(alice).setApprovalForAll(operator.address, true)).wait();
  await (await identity.connect(alice).approve(approved.address, 0n)).wait();
  return { ...base, agentId: 0n };
}

/** agentFixture plus a ReputationRegistry bound to the identity registry. */
export async function reputationFixture() {
  const base = await agentFixture();
  const reputation = await ethers.deployContract("ReputationRegistry", [await base.identity.getAddress()]);
  const signers = await ethers.getSigners();
  const [client1, client2, client3, responder1, responder2] = signers.slice(9, 14);
  return { ...base, reputation, client1, client2, client3, responder1, responder2 };
}
