import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { Wallet, type TypedDataDomain } from "ethers";
import type { IdentityRegistry, PaidRelayDelegate, USDC } from "../../../typechain-types";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../helpers/x402";

const { ethers } = hre;

const ONE_USDC = 10n ** 6n;
const PRICE = 10_000n;
const TRANSFER_VRS = "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)";
const TRANSFER_BYTES = "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)";

/**
 * PaidRelayDelegate as the service runs it: the relayer account delegates to it (EIP-7702, a type-4 transaction it
 * sends itself) and then sends transactions to itself that settle a payment and run an operation atomically.
 */
describe("PaidRelayDelegate (EIP-7702 code of the relayer)", () => {
  async function fixture() {
    const [deployer, payer, payTo, mallory] = await ethers.getSigners();
    const usdc: USDC = await ethers.deployContract("USDC");
    const registry: IdentityRegistry = await ethers.deployContract("IdentityRegistry");
    const delegate: PaidRelayDelegate = await ethers.deployContract("PaidRelayDelegate");
    await usdc.mint(payer.address, 1_000n * ONE_USDC);
    const relayer = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
    await deployer.sendTransaction({ to: relayer.address, value: ethers.parseEther("10") });
    // The relayer delegates to the contract: its own authorization in its own type-4 transaction (nonce + 1).
    const nonce = await ethers.provider.getTransactionCount(relayer.address);
    const authorization = await relayer.authorize({ address: await delegate.getAddress(), nonce: nonce + 1 });
    const setup = await relayer.sendTransaction({ type: 4, to: relayer.address, authorizationList: [authorization], gasLimit: 100_000n, nonce });
    expect((await setup.wait())?.status).to.equal(1);
    const asRelayer = delegate.attach(relayer.address).connect(relayer) as PaidRelayDelegate;
    const domain: TypedDataDomain = {
      name: "USDC",
      version: "2",
      chainId: (await ethers.provider.getNetwork()).chainId,
      verifyingContract: await usdc.getAddress(),
    };
    return { usdc, registry, delegate, relayer, asRelayer, payer, payTo, mallory, domain };
  }

  type Fixture = Awaited<ReturnType<typeof fixture>>;

  /** The calldata of transferWithAuthorization for a payment of PRICE from the payer to payTo, signed by the payer. */
  async function settlement(f: Fixture, options: { form?: "vrs" | "bytes"; nonce?: string; validBefore?: bigint; signer?: typeof f.payer } = {}) {
    const auth = {
      from: f.payer.address,
      to: f.payTo.address,
      value: PRICE,
      validAfter: 0n,
      validBefore: options.validBefore ?? BigInt(await time.latest()) + 300n,
      nonce: options.nonce ?? ethers.hexlify(ethers.randomBytes(32)),
    };
    const signature = await (options.signer ?? f.payer).signTypedData(f.domain, TRANSFER_WITH_AUTHORIZATION_TYPES, auth);
    const head = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
    if (options.form === "bytes") return { auth, calldata: f.usdc.interface.encodeFunctionData(TRANSFER_BYTES as never, [...head, signature] as never) };
    const { v, r, s } = ethers.Signature.from(signature);
    return { auth, calldata: f.usdc.interface.encodeFunctionData(TRANSFER_VRS as never, [...head, v, r, s] as never) };
  }

  const registerCall = (f: Fixture) => f.registry.interface.encodeFunctionData("register(string)", ["ipfs://agent"]);

  it("settles the payment and runs the operation in one transaction, the relayer being the operation's msg.sender", async () => {
    const f = await loadFixture(fixture);
    const { auth, calldata } = await settlement(f);
    const tx = await f.asRelayer.settleAndCall(await f.usdc.getAddress(), calldata, await f.registry.getAddress(), registerCall(f));
    const receipt = (await tx.wait())!;
    await expect(tx).to.emit(f.usdc, "Transfer").withArgs(f.payer.address, f.payTo.address, PRICE);
    await expect(tx).to.emit(f.usdc, "AuthorizationUsed").withArgs(f.payer.address, auth.nonce);
    // The registry minted the agent to its caller, the relayer (its ERC-721 receiver check passed on the delegate).
    await expect(tx).to.emit(f.registry, "Registered").withArgs(0n, "ipfs://agent", f.relayer.address);
    await expect(tx).to.emit(f.asRelayer, "PaidCall").withArgs(f.payer.address, auth.nonce, await f.registry.getAddress(), await f.usdc.getAddress());
    expect(receipt.from).to.equal(f.relayer.address);
    expect(receipt.to).to.equal(f.relayer.address);
    expect(await f.registry.ownerOf(0n)).to.equal(f.relayer.address);
    expect(await f.usdc.balanceOf(f.payTo.address)).to.equal(PRICE);
  });

  it("takes the `bytes signature` form of transferWithAuthorization too", async () => {
    const f = await loadFixture(fixture);
    const { calldata } = await settlement(f, { form: "bytes" });
    await expect(f.asRelayer.settleAndCall(await f.usdc.getAddress(), calldata, await f.registry.getAddress(), registerCall(f)))
      .to.emit(f.usdc, "Transfer")
      .withArgs(f.payer.address, f.payTo.address, PRICE);
  });

  it("OperationFailed: an operation that reverts reverts the payment with it (nothing charged, the authorization unused)", async () => {
    const f = await loadFixture(fixture);
    const { auth, calldata } = await settlement(f);
    const before = await f.usdc.balanceOf(f.payer.address);
    // setAgentURI of an agent that does not exist reverts in the registry.
    const failing = f.registry.interface.encodeFunctionData("setAgentURI", [99n, "ipfs://x"]);
    await expect(f.asRelayer.settleAndCall(await f.usdc.getAddress(), calldata, await f.registry.getAddress(), failing, { gasLimit: 500_000n })).to.be.revertedWithCustomError(
      f.delegate,
      "OperationFailed",
    );
    expect(await f.usdc.balanceOf(f.payer.address)).to.equal(before);
    expect(await f.usdc.authorizationState(f.payer.address, auth.nonce)).to.equal(false);
  });

  it("SettlementFailed: an authorization already used, expired or forged stops the operation (nothing runs unpaid)", async () => {
    const f = await loadFixture(fixture);
    const usdc = await f.usdc.getAddress();
    const registry = await f.registry.getAddress();
    const { calldata } = await settlement(f);
    await (await f.asRelayer.settleAndCall(usdc, calldata, registry, registerCall(f))).wait();
    const expired = await settlement(f, { validBefore: BigInt(await time.latest()) - 1n });
    const forged = await settlement(f, { signer: f.mallory });
    for (const bad of [calldata, expired.calldata, forged.calldata]) {
      await expect(f.asRelayer.settleAndCall(usdc, bad, registry, registerCall(f), { gasLimit: 500_000n })).to.be.revertedWithCustomError(f.delegate, "SettlementFailed");
    }
    expect(await f.registry.balanceOf(f.relayer.address)).to.equal(1n); // only the paid registration happened
    expect(await f.usdc.balanceOf(f.payTo.address)).to.equal(PRICE); // charged once
  });

  it("OnlySelf: nobody but the relayer account itself can call it, on the relayer or on the contract", async () => {
    const f = await loadFixture(fixture);
    const { calldata } = await settlement(f);
    const usdc = await f.usdc.getAddress();
    const registry = await f.registry.getAddress();
    const asMallory = f.delegate.attach(f.relayer.address).connect(f.mallory) as PaidRelayDelegate;
    await expect(asMallory.settleAndCall(usdc, calldata, registry, registerCall(f))).to.be.revertedWithCustomError(f.delegate, "OnlySelf").withArgs(f.mallory.address);
    await expect(f.delegate.connect(f.mallory).settleAndCall(usdc, calldata, registry, registerCall(f)))
      .to.be.revertedWithCustomError(f.delegate, "OnlySelf")
      .withArgs(f.mallory.address);
    expect(await f.usdc.balanceOf(f.payTo.address)).to.equal(0n);
  });

  it("NotATransferWithAuthorization: any other call to the asset, or a truncated one, is refused", async () => {
    const f = await loadFixture(fixture);
    const usdc = await f.usdc.getAddress();
    const registry = await f.registry.getAddress();
    const transfer = f.usdc.interface.encodeFunctionData("transfer", [f.payTo.address, 1n]);
    const { calldata } = await settlement(f);
    const cases: [string, string][] = [
      [transfer, transfer.slice(0, 10)],
      [calldata.slice(0, 2 + 2 * 100), calldata.slice(0, 10)],
      ["0x", "0x00000000"],
    ];
    for (const [bad, selector] of cases) {
      await expect(f.asRelayer.settleAndCall(usdc, bad, registry, registerCall(f), { gasLimit: 500_000n }))
        .to.be.revertedWithCustomError(f.delegate, "NotATransferWithAuthorization")
        .withArgs(selector);
    }
  });

  it("NotAContract: a payment asset or an operation target without code is refused", async () => {
    const f = await loadFixture(fixture);
    const { calldata } = await settlement(f);
    const nobody = Wallet.createRandom().address;
    await expect(f.asRelayer.settleAndCall(nobody, calldata, await f.registry.getAddress(), registerCall(f), { gasLimit: 500_000n }))
      .to.be.revertedWithCustomError(f.delegate, "NotAContract")
      .withArgs(nobody);
    await expect(f.asRelayer.settleAndCall(await f.usdc.getAddress(), calldata, nobody, "0x", { gasLimit: 500_000n }))
      .to.be.revertedWithCustomError(f.delegate, "NotAContract")
      .withArgs(nobody);
  });

  it("accepts ether (a no-op transfer to itself fills a nonce gap) and declares its receiver interfaces", async () => {
    const f = await loadFixture(fixture);
    const filler = await f.relayer.sendTransaction({ to: f.relayer.address, value: 0n, gasLimit: 60_000n });
    expect((await filler.wait())?.status).to.equal(1);
    const [deployer] = await ethers.getSigners();
    await (await deployer.sendTransaction({ to: f.relayer.address, value: 1n })).wait();
    expect(await f.asRelayer.supportsInterface("0x150b7a02")).to.equal(true); // ERC-721 receiver
    expect(await f.asRelayer.supportsInterface("0x4e2312e0")).to.equal(true); // ERC-1155 receiver
    expect(await f.asRelayer.supportsInterface("0x01ffc9a7")).to.equal(true); // ERC-165
    expect(await f.asRelayer.supportsInterface("0xffffffff")).to.equal(false);
    expect(await f.asRelayer.onERC1155Received(f.payer.address, f.payer.address, 1n, 1n, "0x")).to.equal("0xf23a6e61");
    expect(await f.asRelayer.onERC1155BatchReceived(f.payer.address, f.payer.address, [1n], [1n], "0x")).to.equal("0xbc197c81");
  });
});
