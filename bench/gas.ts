import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { ContractTransactionResponse } from "ethers";
import type { ITokenFactory } from "../typechain-types";

export interface GasRow {
  operation: string;
  gas: bigint;
  ratio: number;
}

/** Row names, shared with bench/run.ts (targets) and anyone reading bench/results/gas.json. */
export const OPS = {
  plainExisting: "plain ERC20 transfer (existing recipient)",
  plainNew: "plain ERC20 transfer (new recipient)",
  plainProxied: "plain ERC20 behind an ERC-1967 proxy, transfer (existing recipient)",
  wlExisting: "whitelisted transfer (existing recipient)",
  wlNew: "whitelisted transfer (new recipient)",
  wlTransferFrom: "whitelisted transferFrom (existing recipient)",
  mint: "mint (tokenizer to one investor)",
  burn: "burn",
  whitelist: "setWhitelisted (one address)",
  distribute: "distributeDividends",
  claim: "claimDividends",
  newTokenization: "newTokenization (no premints)",
  newTokenizationPremints: "newTokenization (2 premints)",
  wlExistingAfterDividend: "whitelisted transfer after a distribution (existing recipient)",
  newSto: "newSto (escrow.newOffering)",
  newInvest: "newInvest (escrow.invest, first ticket)",
  newInvestApprove: "newInvest approval (payment token approve)",
  closeOffer: "closeOffer (successful close)",
  withdrawProceeds: "withdrawProceeds (escrow: proceeds of a successful offering to the tokenizer)",
  claimTokens: "claimTokens (escrow.claim, mints the investor's tokens)",
  wlPartiallyFrozen: "whitelisted transfer by a holder with frozen tokens (existing recipient)",
  pause: "pause",
  unpause: "unpause",
  freezeAddress: "setAddressFrozen (freeze one address)",
  setFrozenTokens: "setFrozenTokens (first freeze of a holder)",
  freezePartial: "freezePartialTokens (add to a freeze)",
  unfreezePartial: "unfreezePartialTokens (lower a freeze)",
  forcedTransfer: "forcedTransfer (existing recipient, unfrozen tokens)",
  forcedTransferFrozen: "forcedTransfer taking frozen tokens",
  requestRecovery: "requestRecovery (a lost wallet to another wallet of its investor)",
  executeRecovery: "executeRecovery (balance, freeze and dividends to the new wallet, after the delay)",
  whitelistInvestors: "whitelistInvestors (one wallet, bound to its investor)",
  beginHandover: "beginDefaultAdminTransfer (tokenizer handover, step 1)",
  acceptHandover: "acceptDefaultAdminTransfer (tokenizer handover, step 2)",
  scheduleUpgrade: "scheduleUpgrade (token, to a published implementation)",
  executeUpgrade: "upgradeToAndCall (token, after the delay)",
  grantRole: "grantRole (an agent's first role)",
  revokeRole: "revokeRole",
  redirectClaim: "redirectClaim (escrow: tokens of a removed investor to its new wallet)",
  refundClaim: "refundClaim (escrow: investment of a removed investor paid back)",
} as const;

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

/**
 * Deploys the contracts on the in-process Hardhat network and measures, from receipts, the gas of the plain OZ ERC-20
 * baselines and of the security-token operations. Security-token numbers are taken on a token the factory made (an
 * ERC-1967 proxy); the plain ERC-20 behind the same proxy shows what the proxy alone costs.
 * Ratios: whitelisted transfers against the plain transfer of the same kind, every other row against the plain
 * transfer to an existing holder.
 */
export async function measureGas(hre: HardhatRuntimeEnvironment): Promise<GasRow[]> {
  const { ethers } = hre;
  const [tokenizer, alice, bob, carol, dave, erin] = await ethers.getSigners();
  const unit = 10n ** 18n;

  // Baseline: a plain OpenZeppelin ERC-20 with a constructor premint.
  const plain = await ethers.deployContract("PlainERC20", [alice.address, 1_000_000n * unit]);
  await (await plain.connect(alice).transfer(bob.address, unit)).wait(); // bob becomes an existing holder
  const plainExisting = await gasOf(plain.connect(alice).transfer(bob.address, unit));
  const plainNew = await gasOf(plain.connect(alice).transfer(carol.address, unit));
  // The same behind an ERC-1967 proxy, as the security token is: what the proxy alone costs a transfer.
  const plainImpl = await ethers.deployContract("PlainERC20Upgradeable");
  const plainProxy = await ethers.deployContract("ERC1967Proxy", [
    plainImpl.target,
    plainImpl.interface.encodeFunctionData("initialize", [alice.address, 1_000_000n * unit]),
  ]);
  const proxied = await ethers.getContractAt("PlainERC20Upgradeable", plainProxy.target);
  await (await proxied.connect(alice).transfer(bob.address, unit)).wait();
  const plainProxied = await gasOf(proxied.connect(alice).transfer(bob.address, unit));

  const usdc = await ethers.deployContract("TestERC20", ["USD Coin", "USDC", 6]);
  const tokenImpl = await ethers.deployContract("SecurityToken");
  const escrowImpl = await ethers.deployContract("StoEscrow");
  const factory = await ethers.deployContract("TokenFactory", [
    await tokenImpl.getAddress(),
    await escrowImpl.getAddress(),
    tokenizer.address,
  ]);

  const params = (holders: string[], preMints: bigint[]): ITokenFactory.TokenizationParamsStruct => ({
    name: "Harbour Office Building",
    symbol: "HOB",
    decimals: 18,
    supplyCap: 10_000_000n * unit,
    paymentToken: usdc.target,
    initialHolders: holders,
    initialInvestorIds: holders.map((h) => ethers.id(`investor:${h}`)),
    preMints,
  });
  const create = async (p: ITokenFactory.TokenizationParamsStruct) => {
    const receipt = await (await factory.connect(tokenizer).newTokenization(p)).wait();
    if (!receipt) throw new Error("no receipt");
    const event = receipt.logs
      .map((log) => factory.interface.parseLog(log))
      .find((parsed) => parsed?.name === "TokenCreated");
    if (!event) throw new Error("TokenCreated not emitted");
    return { gas: receipt.gasUsed, token: await ethers.getContractAt("SecurityToken", event.args.token as string) };
  };

  const newTokenization = (await create(params([], []))).gas;
  const { gas: newTokenizationPremints, token } = await create(
    params([alice.address, bob.address], [1_000_000n * unit, 1_000n * unit]),
  );

  const whitelist = await gasOf(token.connect(tokenizer).setWhitelisted(carol.address, true));
  const whitelistInvestors = await gasOf(
    token.connect(tokenizer).whitelistInvestors([dave.address], [ethers.id(`investor:${dave.address}`)]),
  );
  await (await token.connect(tokenizer).setWhitelisted(erin.address, true)).wait();

  const wlExisting = await gasOf(token.connect(alice).transfer(bob.address, unit));
  const wlNew = await gasOf(token.connect(alice).transfer(carol.address, unit));
  await (await token.connect(alice).approve(dave.address, 1_000n * unit)).wait(); // the spender needs no whitelist
  const wlTransferFrom = await gasOf(token.connect(dave).transferFrom(alice.address, bob.address, unit));
  const mint = await gasOf(token.connect(tokenizer).mint(erin.address, 100n * unit));
  const burn = await gasOf(token.connect(alice).burn(unit));

  const dividend = 10_000n * 10n ** 6n;
  await (await usdc.mint(tokenizer.address, dividend)).wait();
  await (await usdc.connect(tokenizer).approve(token.target, dividend)).wait();
  const distribute = await gasOf(token.connect(tokenizer).distributeDividends(dividend));
  const wlExistingAfterDividend = await gasOf(token.connect(alice).transfer(bob.address, unit));
  const claim = await gasOf(token.connect(bob).claimDividends());

  // Offering on the same token: carol (whitelisted above) invests, the tokenizer closes, carol claims.
  const escrow = await ethers.getContractAt("StoEscrow", await token.escrow());
  const now = (await ethers.provider.getBlock("latest"))!.timestamp;
  const usdcUnit = 10n ** 6n;
  const newSto = await gasOf(
    escrow
      .connect(tokenizer)
      .newOffering(
        1_000n * unit,
        0n,
        1_000n * usdcUnit,
        10_000n * usdcUnit,
        100n * usdcUnit,
        10_000n * usdcUnit,
        now + 60,
        now + 86_400,
      ),
  );
  await hre.network.provider.send("evm_increaseTime", [120]);
  await (await usdc.mint(carol.address, 5_000n * usdcUnit)).wait();
  const newInvestApprove = await gasOf(usdc.connect(carol).approve(escrow.target, 5_000n * usdcUnit));
  const newInvest = await gasOf(escrow.connect(carol).invest(5_000n * usdcUnit));
  const closeOffer = await gasOf(escrow.connect(tokenizer).close());
  const withdrawProceeds = await gasOf(escrow.connect(tokenizer).withdrawProceeds(1n));
  const claimTokens = await gasOf(escrow.connect(carol).claim(1n, carol.address));

  // Issuer controls, on the same token (a distribution has happened, so moves write dividend corrections).
  const grantRole = await gasOf(token.connect(tokenizer).grantRole(await token.FREEZER_ROLE(), dave.address));
  const revokeRole = await gasOf(token.connect(tokenizer).revokeRole(await token.FREEZER_ROLE(), dave.address));
  const setFrozenTokens = await gasOf(token.connect(tokenizer).setFrozenTokens(alice.address, 1_000n * unit));
  const freezePartial = await gasOf(token.connect(tokenizer).freezePartialTokens(alice.address, 100n * unit));
  const unfreezePartial = await gasOf(token.connect(tokenizer).unfreezePartialTokens(alice.address, 100n * unit));
  await (await token.connect(bob).transfer(alice.address, unit)).wait(); // both sides corrected already
  const wlPartiallyFrozen = await gasOf(token.connect(alice).transfer(bob.address, unit));
  const forcedTransfer = await gasOf(token.connect(tokenizer).forcedTransfer(alice.address, bob.address, unit));
  await (await token.connect(tokenizer).setFrozenTokens(bob.address, await token.balanceOf(bob.address))).wait();
  const forcedTransferFrozen = await gasOf(token.connect(tokenizer).forcedTransfer(bob.address, alice.address, unit));
  const freezeAddress = await gasOf(token.connect(tokenizer).setAddressFrozen(erin.address, true));
  const pause = await gasOf(token.connect(tokenizer).pause());
  const unpause = await gasOf(token.connect(tokenizer).unpause());
  const heir = ethers.Wallet.createRandom().address;
  await (await token.connect(tokenizer).whitelistInvestors([heir], [ethers.id(`investor:${bob.address}`)])).wait();
  const requestRecovery = await gasOf(token.connect(tokenizer).requestRecovery(bob.address, heir));
  await hre.network.provider.send("evm_increaseTime", [Number(await token.recoveryDelay())]);
  const executeRecovery = await gasOf(token.connect(tokenizer).executeRecovery(bob.address));

  // A second offering: two investors, both removed from the whitelist after the close.
  const now2 = (await ethers.provider.getBlock("latest"))!.timestamp;
  await (
    await escrow
      .connect(tokenizer)
      .newOffering(
        1_000n * unit,
        0n,
        1_000n * usdcUnit,
        10_000n * usdcUnit,
        100n * usdcUnit,
        10_000n * usdcUnit,
        now2 + 60,
        now2 + 86_400,
      )
  ).wait();
  await hre.network.provider.send("evm_increaseTime", [120]);
  // carol invests as an investor the token knows (an offering position keeps the investor of its first ticket).
  await (await token.connect(tokenizer).whitelistInvestors([carol.address], [ethers.id("investor:carol")])).wait();
  for (const investor of [carol, erin]) {
    await (await token.connect(tokenizer).setAddressFrozen(investor.address, false)).wait();
    await (await usdc.mint(investor.address, 2_000n * usdcUnit)).wait();
    await (await usdc.connect(investor).approve(escrow.target, 2_000n * usdcUnit)).wait();
    await (await escrow.connect(investor).invest(2_000n * usdcUnit)).wait();
  }
  await (await escrow.connect(tokenizer).close()).wait();
  await (await token.connect(tokenizer).setWhitelistedBatch([carol.address, erin.address], [false, false])).wait();
  const carolsNewWallet = ethers.Wallet.createRandom().address;
  await (await token.connect(tokenizer).whitelistInvestors([carolsNewWallet], [ethers.id("investor:carol")])).wait();
  const redirectClaim = await gasOf(escrow.connect(tokenizer).redirectClaim(2n, carol.address, carolsNewWallet));
  await (await usdc.connect(tokenizer).approve(escrow.target, 2_000n * usdcUnit)).wait();
  const refundClaim = await gasOf(escrow.connect(tokenizer).refundClaim(2n, erin.address, erin.address));

  // The issuer's key handed over and back, and an upgrade to a newly published implementation.
  const beginHandover = await gasOf(token.connect(tokenizer).beginDefaultAdminTransfer(dave.address));
  await hre.network.provider.send("evm_mine", []);
  const acceptHandover = await gasOf(token.connect(dave).acceptDefaultAdminTransfer());
  await (await token.connect(dave).beginDefaultAdminTransfer(tokenizer.address)).wait();
  await hre.network.provider.send("evm_mine", []);
  await (await token.connect(tokenizer).acceptDefaultAdminTransfer()).wait();
  const nextImpl = await ethers.deployContract("SecurityToken");
  await (await factory.connect(tokenizer).publishImplementations(nextImpl.target, escrowImpl.target)).wait();
  const scheduleUpgrade = await gasOf(token.connect(tokenizer).scheduleUpgrade(nextImpl.target));
  await hre.network.provider.send("evm_increaseTime", [Number(await token.UPGRADE_DELAY())]);
  const executeUpgrade = await gasOf(token.connect(tokenizer).upgradeToAndCall(nextImpl.target, "0x"));

  const ratio = (gas: bigint, base: bigint) => Math.round((Number(gas) / Number(base)) * 1000) / 1000;
  const rows: Array<[string, bigint, bigint]> = [
    [OPS.plainExisting, plainExisting, plainExisting],
    [OPS.plainNew, plainNew, plainNew],
    [OPS.plainProxied, plainProxied, plainExisting],
    [OPS.wlExisting, wlExisting, plainExisting],
    [OPS.wlNew, wlNew, plainNew],
    [OPS.wlTransferFrom, wlTransferFrom, plainExisting],
    [OPS.mint, mint, plainExisting],
    [OPS.burn, burn, plainExisting],
    [OPS.whitelist, whitelist, plainExisting],
    [OPS.distribute, distribute, plainExisting],
    [OPS.claim, claim, plainExisting],
    [OPS.newTokenization, newTokenization, plainExisting],
    [OPS.newTokenizationPremints, newTokenizationPremints, plainExisting],
    [OPS.wlExistingAfterDividend, wlExistingAfterDividend, plainExisting],
    [OPS.newSto, newSto, plainExisting],
    [OPS.newInvestApprove, newInvestApprove, plainExisting],
    [OPS.newInvest, newInvest, plainExisting],
    [OPS.closeOffer, closeOffer, plainExisting],
    [OPS.withdrawProceeds, withdrawProceeds, plainExisting],
    [OPS.claimTokens, claimTokens, plainExisting],
    [OPS.wlPartiallyFrozen, wlPartiallyFrozen, plainExisting],
    [OPS.pause, pause, plainExisting],
    [OPS.unpause, unpause, plainExisting],
    [OPS.freezeAddress, freezeAddress, plainExisting],
    [OPS.setFrozenTokens, setFrozenTokens, plainExisting],
    [OPS.freezePartial, freezePartial, plainExisting],
    [OPS.unfreezePartial, unfreezePartial, plainExisting],
    [OPS.forcedTransfer, forcedTransfer, plainExisting],
    [OPS.forcedTransferFrozen, forcedTransferFrozen, plainExisting],
    [OPS.requestRecovery, requestRecovery, plainExisting],
    [OPS.executeRecovery, executeRecovery, plainExisting],
    [OPS.whitelistInvestors, whitelistInvestors, plainExisting],
    [OPS.beginHandover, beginHandover, plainExisting],
    [OPS.acceptHandover, acceptHandover, plainExisting],
    [OPS.scheduleUpgrade, scheduleUpgrade, plainExisting],
    [OPS.executeUpgrade, executeUpgrade, plainExisting],
    [OPS.grantRole, grantRole, plainExisting],
    [OPS.revokeRole, revokeRole, plainExisting],
    [OPS.redirectClaim, redirectClaim, plainExisting],
    [OPS.refundClaim, refundClaim, plainExisting],
  ];
  return rows.map(([operation, gas, base]) => ({ operation, gas, ratio: ratio(gas, base) }));
}
