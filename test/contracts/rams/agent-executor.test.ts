import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { AgentExecutor, AgentMandate, ComplianceProvider, RegulatedTokenMock } from "../../../typechain-types";
import { APPROVE, DAY, MAX, TRANSFER_FROM, expectAbiSubset, interfaceIdOf, label } from "./helpers";

const { ethers } = hre;

const IDREF = ethers.id("kyc-principal");

describe("RAMS AgentExecutor", () => {
  /** The reference setUp: a whitelisted, funded principal, a three-action mandate, an executor with transferFrom. */
  async function deployFixture() {
    const [admin, complianceOwner, executorOwner, enforcer, principal, agent, recipient, stranger, spender, agent2] =
      await ethers.getSigners();
    const compliance: ComplianceProvider = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
    const mandate: AgentMandate = await ethers.deployContract("AgentMandate", [admin.address]);
    const token: RegulatedTokenMock = await ethers.deployContract("RegulatedTokenMock", [
      "Regulated",
      "RWA",
      admin.address,
    ]);
    const executor: AgentExecutor = await ethers.deployContract("AgentExecutor", [
      await mandate.getAddress(),
      principal.address,
      executorOwner.address,
    ]);
    const tokenAddress = await token.getAddress();
    const executorAddress = await executor.getAddress();
    const SWAP = token.interface.getFunction("swap").selector;

    await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0);
    await token.connect(admin).changeSendWhitelist(principal.address, true);
    await token.connect(admin).changeReceiveWhitelist(principal.address, true);
    await token.connect(admin).changeReceiveWhitelist(recipient.address, true);
    await token.connect(admin).mint(principal.address, 10_000);

    const params = async (over: Record<string, unknown> = {}) => ({
      agent: agent.address,
      validFrom: 0,
      validUntil: (await time.latest()) + DAY,
      principal: principal.address,
      complianceProvider: await compliance.getAddress(),
      identityRef: IDREF,
      asset: tokenAddress,
      maxTransactionValue: 1000,
      maxCumulativeValue: 1500,
      metadata: ethers.ZeroHash,
      actions: [label(TRANSFER_FROM), label(APPROVE), label(SWAP)],
      deadline: 0,
      ...over,
    });
    await mandate.connect(principal).grantMandate(await params(), "0x");
    await mandate.connect(admin).grantRole(await mandate.RECORDER_ROLE(), executorAddress);
    await executor.connect(executorOwner).setAction(TRANSFER_FROM, true, true, 2);
    await token.connect(principal).approve(executorAddress, MAX);

    const transferData = (to: string, amount: bigint | number) =>
      token.interface.encodeFunctionData("transferFrom", [principal.address, to, amount]);
    /** The reference `_transfer`: the agent runs transferFrom(principal, to, amount) through the executor. */
    const transfer = (to: string, amount: bigint | number) =>
      executor.connect(agent).execute(tokenAddress, transferData(to, amount));
    const used = async (who = agent.address) => (await mandate.getMandate(who, principal.address)).cumulativeUsed;
    const cannotExecute = (
      amount: bigint | number,
      selector = TRANSFER_FROM,
      who = agent.address,
      target = tokenAddress,
    ) => [who, target, selector, amount] as const;

    return {
      compliance,
      mandate,
      token,
      executor,
      tokenAddress,
      executorAddress,
      SWAP,
      admin,
      complianceOwner,
      executorOwner,
      enforcer,
      principal,
      agent,
      recipient,
      stranger,
      spender,
      agent2,
      params,
      transferData,
      transfer,
      used,
      cannotExecute,
    };
  }

  describe("reference cases (test/AgentExecutor.t.sol)", () => {
    it("test_TransfersAndRecords: the agent runs transferFrom(principal, recipient, 500) → recipient 500, cumulative 500", async () => {
      const { token, recipient, transfer, used } = await loadFixture(deployFixture);
      await transfer(recipient.address, 500);
      expect(await token.balanceOf(recipient.address)).to.equal(500n);
      expect(await used()).to.equal(500n);
    });

    it("test_AmountArgReadByIndexWithDynamicArgBefore: swap registered at index 2; swap(111, [1,2,3], 42) → cumulative 42", async () => {
      const { executor, executorOwner, agent, token, tokenAddress, SWAP, used } = await loadFixture(deployFixture);
      await executor.connect(executorOwner).setAction(SWAP, true, true, 2);
      const data = token.interface.encodeFunctionData("swap", [111, [1, 2, 3], 42]);
      await executor.connect(agent).execute(tokenAddress, data);
      expect(await used()).to.equal(42n);
    });

    it("test_ApproveWithAmountAtDifferentIndex: approve registered at index 1; approve(spender, 400) → allowance 400, cumulative 400", async () => {
      const { executor, executorOwner, executorAddress, agent, spender, token, tokenAddress, used } = await loadFixture(
        deployFixture,
      );
      await executor.connect(executorOwner).setAction(APPROVE, true, true, 1);
      await executor
        .connect(agent)
        .execute(tokenAddress, token.interface.encodeFunctionData("approve", [spender.address, 400]));
      expect(await token.allowance(executorAddress, spender.address)).to.equal(400n);
      expect(await used()).to.equal(400n);
    });

    it("test_Misconfig_ValueBearingActionAsValueless_BypassesCap: approve registered with hasAmount=false; approve 700 → allowance 700, cumulative stays 0", async () => {
      const { executor, executorOwner, executorAddress, agent, spender, token, tokenAddress, used } = await loadFixture(
        deployFixture,
      );
      await executor.connect(executorOwner).setAction(APPROVE, true, false, 0);
      await executor
        .connect(agent)
        .execute(tokenAddress, token.interface.encodeFunctionData("approve", [spender.address, 700]));
      expect(await token.allowance(executorAddress, spender.address)).to.equal(700n); // the call ran
      expect(await used()).to.equal(0n); // but nothing was counted against the caps
    });

    it("test_RevertsOverCumulativeCap: transfer 1000, then 1000 again → CannotExecute(agent, token, transferFrom, 1000)", async () => {
      const { executor, recipient, transfer, cannotExecute } = await loadFixture(deployFixture);
      await transfer(recipient.address, 1000);
      await expect(transfer(recipient.address, 1000))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(1000));
    });

    it("test_RevertsOverPerTxCap: 1500 → CannotExecute(agent, token, transferFrom, 1500)", async () => {
      const { executor, recipient, transfer, cannotExecute } = await loadFixture(deployFixture);
      await expect(transfer(recipient.address, 1500))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(1500));
    });

    it("test_RevertsUnsupportedSelector: the selector of foo() → UnsupportedAction(selector)", async () => {
      const { executor, agent, tokenAddress } = await loadFixture(deployFixture);
      const unknown = ethers.id("foo()").slice(0, 10);
      await expect(executor.connect(agent).execute(tokenAddress, unknown))
        .to.be.revertedWithCustomError(executor, "UnsupportedAction")
        .withArgs(unknown);
    });

    it("test_RevertsWhenFrozen: the enforcer freezes the agent → CannotExecute(…, 500)", async () => {
      const { mandate, executor, admin, enforcer, agent, recipient, transfer, cannotExecute } = await loadFixture(
        deployFixture,
      );
      await mandate.connect(admin).grantRole(await mandate.ENFORCER_ROLE(), enforcer.address);
      await mandate.connect(enforcer).freezeAgent(agent.address);
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(500));
    });

    it("test_RevertsWhenRevoked: the principal revokes → CannotExecute(…, 500)", async () => {
      const { mandate, executor, principal, agent, recipient, transfer, cannotExecute } = await loadFixture(
        deployFixture,
      );
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(500));
    });

    it("test_SetActionCanDisable: setAction(transferFrom, false, …) → supported false; execute → UnsupportedAction", async () => {
      const { executor, executorOwner, recipient, transfer } = await loadFixture(deployFixture);
      await executor.connect(executorOwner).setAction(TRANSFER_FROM, false, true, 2);
      expect((await executor.actions(TRANSFER_FROM)).supported).to.equal(false);
      await expect(transfer(recipient.address, 100))
        .to.be.revertedWithCustomError(executor, "UnsupportedAction")
        .withArgs(TRANSFER_FROM);
    });

    it("test_SetActionOnlyOwner: the agent calls setAction → OwnableUnauthorizedAccount(agent)", async () => {
      const { executor, agent } = await loadFixture(deployFixture);
      await expect(executor.connect(agent).setAction(TRANSFER_FROM, true, true, 2))
        .to.be.revertedWithCustomError(executor, "OwnableUnauthorizedAccount")
        .withArgs(agent.address);
    });

    it("test_SetActionRegisters: setAction(approve, true, true, 1) → stored (true, true, 1)", async () => {
      const { executor, executorOwner } = await loadFixture(deployFixture);
      await executor.connect(executorOwner).setAction(APPROVE, true, true, 1);
      const [supported, hasAmount, amountIndex] = await executor.actions(APPROVE);
      expect([supported, hasAmount, amountIndex]).to.deep.equal([true, true, 1n]);
    });

    it("test_TokenComplianceBlocksIndependently: transfer to a non-whitelisted stranger → CallFailed(ERC7943CannotReceive(stranger))", async () => {
      const { executor, token, stranger, transfer } = await loadFixture(deployFixture);
      const inner = token.interface.encodeErrorResult("ERC7943CannotReceive", [stranger.address]);
      await expect(transfer(stranger.address, 500))
        .to.be.revertedWithCustomError(executor, "CallFailed")
        .withArgs(inner);
    });
  });

  describe("ABI identity with ERC-8226", () => {
    it("type(IAgentExecutor).interfaceId is 0x1cff79cd, the selector of execute(address,bytes)", async () => {
      const { executor } = await loadFixture(deployFixture);
      expect(await interfaceIdOf("IAgentExecutor")).to.equal("0x1cff79cd");
      expect(executor.interface.getFunction("execute").format("sighash")).to.equal("execute(address,bytes)");
      expect(executor.interface.getFunction("execute").selector).to.equal("0x1cff79cd");
      await expectAbiSubset("IAgentExecutor", "AgentExecutor");
    });

    it("setAction, actions and the executor's errors have the reference selectors and shapes", async () => {
      const { executor } = await loadFixture(deployFixture);
      const iface = executor.interface;
      expect(iface.getFunction("setAction").format("sighash")).to.equal("setAction(bytes4,bool,bool,uint8)");
      expect(iface.getFunction("setAction").selector).to.equal("0xa4a22854");
      expect(iface.getFunction("actions").selector).to.equal("0x7b37e5f4");
      expect(iface.getFunction("actions").format("full")).to.equal(
        "function actions(bytes4 selector) view returns (bool supported, bool hasAmount, uint8 amountIndex)",
      );
      const errors: Record<string, [string, string]> = {
        UnsupportedAction: ["UnsupportedAction(bytes4)", "0x8c91850f"],
        InvalidData: ["InvalidData()", "0x5cb045db"],
        CannotExecute: ["CannotExecute(address,address,bytes4,uint256)", "0x0aae0b09"],
        CallFailed: ["CallFailed(bytes)", "0xa5fa8d2b"],
      };
      for (const [name, [sig, selector]] of Object.entries(errors)) {
        expect(iface.getError(name)!.format("sighash"), name).to.equal(sig);
        expect(iface.getError(name)!.selector, name).to.equal(selector);
      }
      expect(label(TRANSFER_FROM)).to.equal("0x23b872dd" + "0".repeat(56));
    });

    it("the constructor binds the registry, the principal and the owner", async () => {
      const { executor, mandate, principal, executorOwner } = await loadFixture(deployFixture);
      expect(await executor.rams()).to.equal(await mandate.getAddress());
      expect(await executor.principal()).to.equal(principal.address);
      expect(await executor.owner()).to.equal(executorOwner.address);
    });
  });

  describe("execute: steps, events and every revert path", () => {
    it("forwards the call, returns its return data and emits the registry's ExecutionRecorded and the token's Transfer", async () => {
      const { executor, mandate, token, tokenAddress, principal, agent, recipient, transferData } = await loadFixture(
        deployFixture,
      );
      const data = transferData(recipient.address, 300);
      const returned = await executor.connect(agent).execute.staticCall(tokenAddress, data);
      expect(returned).to.equal(ethers.AbiCoder.defaultAbiCoder().encode(["bool"], [true]));
      const tx = executor.connect(agent).execute(tokenAddress, data);
      await expect(tx)
        .to.emit(mandate, "ExecutionRecorded")
        .withArgs(agent.address, principal.address, label(TRANSFER_FROM), 300, 300);
      await expect(tx).to.emit(token, "Transfer").withArgs(principal.address, recipient.address, 300);
    });

    it("InvalidData for calldata shorter than a selector", async () => {
      const { executor, agent, tokenAddress } = await loadFixture(deployFixture);
      for (const data of ["0x", "0x23b872"]) {
        await expect(executor.connect(agent).execute(tokenAddress, data)).to.be.revertedWithCustomError(
          executor,
          "InvalidData",
        );
      }
    });

    it("InvalidData when the calldata ends before the registered amount argument (a word short, or index 255)", async () => {
      const { executor, executorOwner, agent, tokenAddress, transferData } = await loadFixture(deployFixture);
      const full = transferData(agent.address, 5);
      const short = ethers.dataSlice(full, 0, 4 + 32 * 3 - 1); // last byte of the amount missing
      await expect(executor.connect(agent).execute(tokenAddress, short)).to.be.revertedWithCustomError(
        executor,
        "InvalidData",
      );
      await executor.connect(executorOwner).setAction(TRANSFER_FROM, true, true, 255);
      await expect(executor.connect(agent).execute(tokenAddress, full)).to.be.revertedWithCustomError(
        executor,
        "InvalidData",
      );
    });

    it("CannotExecute when the target is not the mandate's asset, even with an allowance there", async () => {
      const { executor, admin, principal, agent, recipient, executorAddress, transferData, cannotExecute } =
        await loadFixture(deployFixture);
      const other = await ethers.deployContract("RegulatedTokenMock", ["Other", "OTH", admin.address]);
      await other.connect(principal).approve(executorAddress, MAX);
      const otherAddress = await other.getAddress();
      await expect(executor.connect(agent).execute(otherAddress, transferData(recipient.address, 10)))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(10, TRANSFER_FROM, agent.address, otherAddress));
    });

    it("CannotExecute for a caller that holds no mandate from the principal", async () => {
      const { executor, tokenAddress, stranger, recipient, transferData, cannotExecute } = await loadFixture(
        deployFixture,
      );
      await expect(executor.connect(stranger).execute(tokenAddress, transferData(recipient.address, 10)))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(10, TRANSFER_FROM, stranger.address));
    });

    it("CannotExecute once the mandate has expired", async () => {
      const { executor, recipient, transfer, cannotExecute } = await loadFixture(deployFixture);
      await time.increase(DAY + 1);
      await expect(transfer(recipient.address, 10))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(10));
    });

    it("without RECORDER_ROLE the registry's UnauthorizedRecorder surfaces unchanged", async () => {
      const { mandate, admin, executorAddress, recipient, transfer } = await loadFixture(deployFixture);
      await mandate.connect(admin).revokeRole(await mandate.RECORDER_ROLE(), executorAddress);
      await expect(transfer(recipient.address, 10)).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
    });

    it("CallFailed carries the token's revert data, and nothing is recorded (missing allowance, sender blocked, frozen tokens)", async () => {
      const { executor, token, admin, principal, executorAddress, recipient, transfer, used } = await loadFixture(
        deployFixture,
      );
      await token.connect(principal).approve(executorAddress, 0);
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CallFailed")
        .withArgs(token.interface.encodeErrorResult("ERC20InsufficientAllowance", [executorAddress, 0, 500]));
      await token.connect(principal).approve(executorAddress, MAX);

      await token.connect(admin).setFrozenTokens(principal.address, 9_800);
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CallFailed")
        .withArgs(
          token.interface.encodeErrorResult("ERC7943InsufficientUnfrozenBalance", [principal.address, 500, 200]),
        );
      await token.connect(admin).setFrozenTokens(principal.address, 0);

      await token.connect(admin).changeSendWhitelist(principal.address, false);
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CallFailed")
        .withArgs(token.interface.encodeErrorResult("ERC7943CannotSend", [principal.address]));
      expect(await used()).to.equal(0n);
    });

    it("is not reentrant: a target calling back into execute fails with CallFailed(ReentrancyGuardReentrantCall())", async () => {
      const { executor, executorOwner, mandate, principal, agent2, params, executorAddress } = await loadFixture(
        deployFixture,
      );
      const target = await ethers.deployContract("ReenteringTarget");
      await target.setExecutor(executorAddress);
      const targetAddress = await target.getAddress();
      const poke = target.interface.getFunction("poke").selector;
      await mandate
        .connect(principal)
        .grantMandate(await params({ agent: agent2.address, asset: targetAddress, actions: [label(poke)] }), "0x");
      await executor.connect(executorOwner).setAction(poke, true, false, 0);
      await expect(executor.connect(agent2).execute(targetAddress, poke))
        .to.be.revertedWithCustomError(executor, "CallFailed")
        .withArgs(executor.interface.encodeErrorResult("ReentrancyGuardReentrantCall", []));
    });

    it("several agents of the principal share the executor, each under its own mandate and caps", async () => {
      const { executor, mandate, principal, agent2, recipient, tokenAddress, params, transfer, transferData, used } =
        await loadFixture(deployFixture);
      await mandate
        .connect(principal)
        .grantMandate(await params({ agent: agent2.address, maxTransactionValue: 50 }), "0x");
      await transfer(recipient.address, 900);
      await executor.connect(agent2).execute(tokenAddress, transferData(recipient.address, 50));
      await expect(executor.connect(agent2).execute(tokenAddress, transferData(recipient.address, 51)))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(agent2.address, tokenAddress, TRANSFER_FROM, 51);
      expect(await used()).to.equal(900n);
      expect(await used(agent2.address)).to.equal(50n);
    });

    it("the gated amount is the one in the calldata: amount 0 is always within the caps", async () => {
      const { recipient, transfer, used } = await loadFixture(deployFixture);
      await transfer(recipient.address, 1500 - 1500); // zero transfer
      await transfer(recipient.address, 1000);
      await transfer(recipient.address, 500);
      await transfer(recipient.address, 0);
      expect(await used()).to.equal(1500n);
    });
  });

  describe("compliance asked at every execution (issue 48: not in the reference)", () => {
    it("an agent of a principal revoked at the compliance provider calling the executor directly → CannotExecute; no tokens move, nothing recorded", async () => {
      const { compliance, complianceOwner, executor, token, principal, recipient, transfer, used, cannotExecute } =
        await loadFixture(deployFixture);
      await transfer(recipient.address, 100);
      await compliance.connect(complianceOwner).revokePrincipal(principal.address, 2 /* AML_FLAG */);
      await expect(transfer(recipient.address, 500))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(500));
      expect(await token.balanceOf(recipient.address)).to.equal(100n);
      expect(await used()).to.equal(100n);
      // granted again under the mandate's identity reference: the same mandate executes again
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0);
      await transfer(recipient.address, 500);
      expect(await token.balanceOf(recipient.address)).to.equal(600n);
    });

    it("a principal whose KYC expired at the provider: the executor refuses one second after expiresAt", async () => {
      const { compliance, complianceOwner, executor, principal, recipient, transfer, cannotExecute } =
        await loadFixture(deployFixture);
      const expiresAt = (await time.latest()) + 100;
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiresAt);
      await time.setNextBlockTimestamp(expiresAt);
      await transfer(recipient.address, 10);
      await time.setNextBlockTimestamp(expiresAt + 1);
      await expect(transfer(recipient.address, 10))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(...cannotExecute(10));
    });
  });

  describe("setAction", () => {
    it("emits ActionSet and overwrites the previous rule", async () => {
      const { executor, executorOwner } = await loadFixture(deployFixture);
      await expect(executor.connect(executorOwner).setAction(APPROVE, true, true, 1))
        .to.emit(executor, "ActionSet")
        .withArgs(APPROVE, true, true, 1);
      await executor.connect(executorOwner).setAction(APPROVE, true, false, 7);
      expect([...(await executor.actions(APPROVE))]).to.deep.equal([true, false, 7n]);
    });

    it("hasAmount=false bypasses both caps: an approve far above them runs; with hasAmount=true it is refused", async () => {
      const { executor, executorOwner, executorAddress, agent, spender, token, tokenAddress, used } = await loadFixture(
        deployFixture,
      );
      const approve5000 = token.interface.encodeFunctionData("approve", [spender.address, 5000]);
      await executor.connect(executorOwner).setAction(APPROVE, true, false, 0);
      await executor.connect(agent).execute(tokenAddress, approve5000);
      expect(await token.allowance(executorAddress, spender.address)).to.equal(5000n);
      expect(await used()).to.equal(0n);

      await executor.connect(executorOwner).setAction(APPROVE, true, true, 1);
      await expect(executor.connect(agent).execute(tokenAddress, approve5000))
        .to.be.revertedWithCustomError(executor, "CannotExecute")
        .withArgs(agent.address, tokenAddress, APPROVE, 5000);
    });

    it("its NatSpec warns that a value-moving selector registered with hasAmount=false bypasses the caps", async () => {
      const devdoc = await docsOf("contracts/rams/AgentExecutor.sol", "AgentExecutor", "devdoc");
      const details: string = devdoc.methods["setAction(bytes4,bool,bool,uint8)"].details;
      expect(details).to.match(/hasAmount = false/);
      expect(details).to.match(/BYPASSES both the per-transaction and the cumulative cap/);
    });
  });

  describe("test-support RegulatedTokenMock (ERC-7943)", () => {
    it("canTransfer mirrors the whitelists and the frozen amount; forcedTransfer ignores both but not the receiver list", async () => {
      const { token, admin, principal, recipient, stranger } = await loadFixture(deployFixture);
      expect(await token.canTransfer(principal.address, recipient.address, 10_000)).to.equal(true);
      expect(await token.canTransfer(principal.address, stranger.address, 1)).to.equal(false);
      await token.connect(admin).setFrozenTokens(principal.address, 9_000);
      expect(await token.canTransfer(principal.address, recipient.address, 1_001)).to.equal(false);
      await token.connect(admin).changeSendWhitelist(principal.address, false);
      await expect(token.connect(admin).forcedTransfer(principal.address, stranger.address, 1))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(stranger.address);
      // takes 500 more than the unfrozen 1,000: the frozen amount shrinks by 500
      await expect(token.connect(admin).forcedTransfer(principal.address, recipient.address, 1_500))
        .to.emit(token, "ForcedTransfer")
        .withArgs(principal.address, recipient.address, 1_500)
        .and.to.emit(token, "Frozen")
        .withArgs(principal.address, 8_500);
      expect(await token.getFrozenTokens(principal.address)).to.equal(8_500n);
    });

    it("role-gated mint and burn; minting to a non-receiver and burning by a non-sender revert with ERC-7943 errors", async () => {
      const { token, admin, stranger } = await loadFixture(deployFixture);
      await expect(token.connect(stranger).mint(stranger.address, 1))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(stranger.address, await token.MINTER_ROLE());
      await expect(token.connect(admin).mint(stranger.address, 1))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(stranger.address);
      await token.connect(admin).changeReceiveWhitelist(admin.address, true);
      await token.connect(admin).mint(admin.address, 10);
      await expect(token.connect(admin).burn(1))
        .to.be.revertedWithCustomError(token, "ERC7943CannotSend")
        .withArgs(admin.address);
      await token.connect(admin).changeSendWhitelist(admin.address, true);
      await token.connect(admin).burn(4);
      expect(await token.balanceOf(admin.address)).to.equal(6n);
      expect(await token.getRoleMemberCount(await token.MINTER_ROLE())).to.equal(1n);
      expect(await token.supportsInterface(await interfaceIdOf("IERC7943Fungible"))).to.equal(true);
    });
  });

  describe("NatSpec", () => {
    for (const [file, name] of [
      ["contracts/rams/AgentExecutor.sol", "AgentExecutor"],
      ["contracts/rams/AgentMandate.sol", "AgentMandate"],
      ["contracts/rams/ComplianceProvider.sol", "ComplianceProvider"],
    ]) {
      it(`${name}: every external function, event and error it or its ERC-8226 interface declares is documented`, async () => {
        const userdoc = await docsOf(file, name, "userdoc");
        const devdoc = await docsOf(file, name, "devdoc");
        const iface = new ethers.Interface((await hre.artifacts.readArtifact(name)).abi);
        // Entries inherited from OpenZeppelin are OpenZeppelin's to document.
        const inherited = new Set<string>();
        for (const base of OZ_BASES) {
          const baseIface = new ethers.Interface((await hre.artifacts.readArtifact(base)).abi);
          baseIface.fragments.forEach((f) => {
            if ("format" in f && f.type !== "constructor") inherited.add(`${f.type} ${f.format("sighash")}`);
          });
        }
        const missing: string[] = [];
        const check = (type: string, sig: string, documented: boolean) => {
          if (!documented && !inherited.has(`${type} ${sig}`)) missing.push(`${type} ${sig}`);
        };
        iface.forEachFunction((fn) => {
          const sig = fn.format("sighash");
          check(
            "function",
            sig,
            !!(userdoc.methods?.[sig] || devdoc.methods?.[sig] || devdoc.stateVariables?.[fn.name]),
          );
        });
        iface.forEachEvent((ev) => {
          const sig = ev.format("sighash");
          check("event", sig, !!(userdoc.events?.[sig] || devdoc.events?.[sig]));
        });
        iface.forEachError((er) => {
          const sig = er.format("sighash");
          check("error", sig, !!(userdoc.errors?.[sig] || devdoc.errors?.[sig]));
        });
        expect(missing).to.deep.equal([]);
      });
    }
  });
});

const OZ_BASES = [
  "@openzeppelin/contracts/access/Ownable.sol:Ownable",
  "@openzeppelin/contracts/access/AccessControl.sol:AccessControl",
  "@openzeppelin/contracts/utils/cryptography/EIP712.sol:EIP712",
  "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol:ReentrancyGuardTransient",
  "@openzeppelin/contracts/utils/introspection/ERC165.sol:ERC165",
];

/** The compiler's userdoc or devdoc of a contract, read from the metadata kept in its build info. */
 
async function docsOf(file: string, name: string, kind: "userdoc" | "devdoc"): Promise<any> {
  const buildInfo = await hre.artifacts.getBuildInfo(`${file}:${name}`);
  if (!buildInfo) throw new Error(`no build info for ${name}`);
   
  const metadata = JSON.parse((buildInfo.output.contracts[file][name] as any).metadata);
  return metadata.output[kind];
}
