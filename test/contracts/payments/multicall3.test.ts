import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { Multicall3, USDC } from "../../../typechain-types";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../helpers/x402";

const { ethers } = hre;

const PRICE = 10_000n;
const TRANSFER_VRS = "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)";

/**
 * The local stand-in for the canonical Multicall3, as the service's settlement batches use it: aggregate3 runs each
 * payment's transferWithAuthorization on the payment asset, each allowed to fail alone. A canonical Multicall3 behaves
 * the same on these calls (same ABI, same per-call failure rule).
 */
describe("Multicall3 (local stand-in): settlement batches", () => {
  async function fixture() {
    const [settler, payer, payTo, other] = await ethers.getSigners();
    const usdc: USDC = await ethers.deployContract("USDC");
    const multicall: Multicall3 = await ethers.deployContract("Multicall3");
    await usdc.mint(payer.address, 1_000_000n);
    const domain = { name: "USDC", version: "2", chainId: (await ethers.provider.getNetwork()).chainId, verifyingContract: await usdc.getAddress() };
    /** A signed payment of PRICE from the payer to payTo, as transferWithAuthorization calldata. */
    const payment = async (nonce = ethers.hexlify(ethers.randomBytes(32)), value = PRICE) => {
      const auth = { from: payer.address, to: payTo.address, value, validAfter: 0n, validBefore: BigInt(await time.latest()) + 300n, nonce };
      const { v, r, s } = ethers.Signature.from(await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, auth));
      return { nonce, callData: usdc.interface.encodeFunctionData(TRANSFER_VRS as never, [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, v, r, s] as never) };
    };
    return { settler, payer, payTo, other, usdc, multicall, payment, target: await usdc.getAddress() };
  }

  it("aggregate3 with failures allowed: a used authorization fails alone, the others pay, each shown by its AuthorizationUsed", async () => {
    const f = await loadFixture(fixture);
    const [a, b] = [await f.payment(), await f.payment()];
    const calls = [a, a, b].map((p) => ({ target: f.target, allowFailure: true, callData: p.callData }));
    const results = await f.multicall.aggregate3.staticCall(calls);
    expect(results.map((r) => r.success)).to.deep.equal([true, false, true]);
    const tx = f.multicall.connect(f.settler).aggregate3(calls);
    await expect(tx).to.emit(f.usdc, "AuthorizationUsed").withArgs(f.payer.address, a.nonce);
    await expect(tx).to.emit(f.usdc, "AuthorizationUsed").withArgs(f.payer.address, b.nonce);
    await expect(tx).to.changeTokenBalances(f.usdc, [f.payer, f.payTo], [-2n * PRICE, 2n * PRICE]);
    const receipt = await (await tx).wait();
    const used = receipt!.logs.filter((l) => l.topics[0] === f.usdc.interface.getEvent("AuthorizationUsed").topicHash);
    expect(used, "one AuthorizationUsed per payment paid").to.have.length(2);
  });

  it("aggregate3 reverts with CallFailed(index) when a call that may not fail fails: nothing of the batch is paid", async () => {
    const f = await loadFixture(fixture);
    const [a, b] = [await f.payment(), await f.payment()];
    const calls = [
      { target: f.target, allowFailure: false, callData: a.callData },
      { target: f.target, allowFailure: false, callData: (await f.payment(undefined, 10n ** 12n)).callData }, // beyond the balance
      { target: f.target, allowFailure: false, callData: b.callData },
    ];
    await expect(f.multicall.aggregate3(calls)).to.be.revertedWithCustomError(f.multicall, "CallFailed").withArgs(1);
    expect(await f.usdc.authorizationState(f.payer.address, a.nonce)).to.equal(false);
    expect(await f.usdc.balanceOf(f.payTo.address)).to.equal(0n);
  });

  it("tryAggregate: with requireSuccess a failed call reverts CallFailed(index); without it, each call's result is returned", async () => {
    const f = await loadFixture(fixture);
    const a = await f.payment();
    const calls = [a, a].map((p) => ({ target: f.target, callData: p.callData }));
    await expect(f.multicall.tryAggregate(true, calls)).to.be.revertedWithCustomError(f.multicall, "CallFailed").withArgs(1);
    const results = await f.multicall.tryAggregate.staticCall(false, calls);
    expect(results.map((r) => r.success)).to.deep.equal([true, false]);
  });
});
