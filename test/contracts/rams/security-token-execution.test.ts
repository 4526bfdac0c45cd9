import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { AgentExecutor, AgentMandate, ComplianceProvider } from "../../../typechain-types";
import { createTokenization, deployFactoryFixture, investorIdOf, tokenizationParams } from "../tokenization/helpers";
import { DAY, MAX, TRANSFER_FROM, interfaceIdOf, label } from "./helpers";

const { ethers } = hre;

const IDREF = ethers.id("kyc-principal");

/**
 * ERC-8226 (RAMS) on our own SecurityToken: the flows agent-executor.test.ts runs on the reference's test token
 * (RegulatedTokenMock, a uRWA-20) pass on a token made by our factory, with the token's own ERC-7943 rules applied to
 * every call the executor forwards (whitelist, frozen amounts, address freezes, pause), and an issuer can hand an
 * enforcement action to an agent under a capped mandate.
 */
describe("RAMS AgentExecutor on a SecurityToken (ERC-7943 checks of our token)", () => {
  async function fixture() {
    const base = await deployFactoryFixture();
    const signers = await ethers.getSigners();
    const [admin, complianceOwner, executorOwner, principal, agent, recipient, stranger] = [signers[0], ...signers.slice(7, 13)];
    const tokenizer = base.tokenizer;
    const { token } = await createTokenization(
      base.factory,
      tokenizer,
      tokenizationParams(await base.usdc.getAddress(), { initialHolders: [principal.address, recipient.address], preMints: [10_000n, 0n] }),
    );
    const compliance: ComplianceProvider = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
    const mandate: AgentMandate = await ethers.deployContract("AgentMandate", [admin.address]);
    const tokenAddress = await token.getAddress();

    /** A principal's executor with transferFrom (amount at index 2), and a mandate for `agent` over the token. */
    const venue = async (who = principal, actions = [label(TRANSFER_FROM)]) => {
      const executor: AgentExecutor = await ethers.deployContract("AgentExecutor", [await mandate.getAddress(), who.address, executorOwner.address]);
      await compliance.connect(complianceOwner).grantPrincipal(who.address, IDREF, 0);
      await mandate.connect(who).grantMandate(
        {
          agent: agent.address,
          validFrom: 0,
          validUntil: (await time.latest()) + 7 * DAY, // outlives a wallet recovery's delay
          principal: who.address,
          complianceProvider: await compliance.getAddress(),
          identityRef: IDREF,
          asset: tokenAddress,
          maxTransactionValue: 1000,
          maxCumulativeValue: 1500,
          metadata: ethers.ZeroHash,
          actions,
          deadline: 0,
        },
        "0x",
      );
      await mandate.connect(admin).grantRole(await mandate.RECORDER_ROLE(), await executor.getAddress());
      await executor.connect(executorOwner).setAction(TRANSFER_FROM, true, true, 2);
      return executor;
    };
    const executor = await venue();
    await token.connect(principal).approve(await executor.getAddress(), MAX);
    const transfer = (to: string, amount: bigint | number) =>
      executor.connect(agent).execute(tokenAddress, token.interface.encodeFunctionData("transferFrom", [principal.address, to, amount]));
    const used = async () => (await mandate.getMandate(agent.address, principal.address)).cumulativeUsed;
    /** The executor's CallFailed with the token's own revert data. */
    const failsWith = (tx: Promise<unknown>, error: string, args: unknown[]) =>
      expect(tx).to.be.revertedWithCustomError(executor, "CallFailed").withArgs(token.interface.encodeErrorResult(error, args));
    return { ...base, token, tokenAddress, compliance, mandate, executor, venue, transfer, used, failsWith, tokenizer, executorOwner, principal, agent, recipient, stranger };
  }

  it("is an ERC-7943 fungible token as the reference's test token is", async () => {
    const { token } = await loadFixture(fixture);
    expect(await token.supportsInterface(await interfaceIdOf("IERC7943Fungible"))).to.equal(true);
  });

  it("the agent moves the principal's tokens within its mandate; the registry records it and the caps hold", async () => {
    const { token, executor, mandate, recipient, transfer, used, agent, tokenAddress } = await loadFixture(fixture);
    await expect(transfer(recipient.address, 500)).to.emit(mandate, "ExecutionRecorded");
    expect(await token.balanceOf(recipient.address)).to.equal(500n);
    expect(await used()).to.equal(500n);
    await transfer(recipient.address, 1000);
    await expect(transfer(recipient.address, 1))
      .to.be.revertedWithCustomError(executor, "CannotExecute")
      .withArgs(agent.address, tokenAddress, TRANSFER_FROM, 1);
  });

  it("the token refuses on its own: a receiver off the whitelist, frozen tokens, a frozen or removed principal, a pause; nothing is recorded", async () => {
    const { token, tokenizer, principal, recipient, stranger, transfer, used, failsWith } = await loadFixture(fixture);
    await failsWith(transfer(stranger.address, 500), "ERC7943CannotReceive", [stranger.address]);

    await token.connect(tokenizer).setFrozenTokens(principal.address, 9_800);
    await failsWith(transfer(recipient.address, 500), "ERC7943InsufficientUnfrozenBalance", [principal.address, 500, 200]);
    await token.connect(tokenizer).setFrozenTokens(principal.address, 0);

    await token.connect(tokenizer).setAddressFrozen(principal.address, true);
    await failsWith(transfer(recipient.address, 500), "ERC7943CannotSend", [principal.address]);
    await token.connect(tokenizer).setAddressFrozen(principal.address, false);

    await token.connect(tokenizer).setAddressFrozen(recipient.address, true);
    await failsWith(transfer(recipient.address, 500), "ERC7943CannotReceive", [recipient.address]);
    await token.connect(tokenizer).setAddressFrozen(recipient.address, false);

    await token.connect(tokenizer).pause();
    await failsWith(transfer(recipient.address, 500), "EnforcedPause", []);
    await token.connect(tokenizer).unpause();

    await token.connect(tokenizer).setWhitelisted(principal.address, false);
    await failsWith(transfer(recipient.address, 500), "ERC7943CannotSend", [principal.address]);
    expect(await used()).to.equal(0n);
    expect(await token.detectTransferRestriction(principal.address, recipient.address, 500)).to.equal(2n);
  });

  it("after the principal's wallet is recovered, its mandate can move nothing from the lost wallet", async () => {
    const { token, tokenizer, principal, recipient, stranger, transfer, failsWith } = await loadFixture(fixture);
    // The principal's second wallet, bound to the same investor; the recovery waits out its delay.
    await token.connect(tokenizer).whitelistInvestors([stranger.address], [investorIdOf(principal.address)]);
    await token.connect(tokenizer).requestRecovery(principal.address, stranger.address);
    await time.increase(await token.recoveryDelay());
    await token.connect(tokenizer).executeRecovery(principal.address);
    await failsWith(transfer(recipient.address, 1), "ERC7943CannotSend", [principal.address]);
    expect(await token.balanceOf(stranger.address)).to.equal(10_000n);
  });

  it("an issuer hands forced transfers to an agent under a capped mandate: its executor holds ENFORCER_ROLE", async () => {
    const { token, tokenizer, executorOwner, venue, principal, recipient, agent, mandate, tokenAddress } = await loadFixture(fixture);
    const FORCED = token.interface.getFunction("forcedTransfer").selector;
    const issuerVenue = await venue(tokenizer, [label(FORCED)]);
    await issuerVenue.connect(executorOwner).setAction(FORCED, true, true, 2);
    const force = (amount: number) => issuerVenue.connect(agent).execute(tokenAddress, token.interface.encodeFunctionData("forcedTransfer", [principal.address, recipient.address, amount]));

    // Without the role the token refuses the executor.
    await expect(force(300))
      .to.be.revertedWithCustomError(issuerVenue, "CallFailed")
      .withArgs(token.interface.encodeErrorResult("AccessControlUnauthorizedAccount", [await issuerVenue.getAddress(), await token.ENFORCER_ROLE()]));
    await token.connect(tokenizer).grantRole(await token.ENFORCER_ROLE(), await issuerVenue.getAddress());
    await token.connect(tokenizer).setAddressFrozen(principal.address, true); // a court order: the holder is frozen
    await expect(force(300)).to.emit(token, "ForcedTransfer").withArgs(principal.address, recipient.address, 300);
    expect(await token.balanceOf(recipient.address)).to.equal(300n);
    expect((await mandate.getMandate(agent.address, tokenizer.address)).cumulativeUsed).to.equal(300n);
    await expect(force(1001)).to.be.revertedWithCustomError(issuerVenue, "CannotExecute");
  });
});
