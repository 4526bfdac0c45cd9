import { expect } from "chai";
import { Signature, Wallet } from "ethers";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { USDC__factory } from "../../typechain-types";
import { healWalletNonces } from "../../service/engine/nonce-healing";
import { InProcessFacilitator } from "../../service/payments/facilitator";
import { KeySigner } from "../../service/signers/key-signer";
import { verifyPlainTransferAuthorization } from "../../service/payments/eip3009";
import type { Chain } from "../../service/chains/registry";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { payWithEthers, type PaymentOverrides } from "../helpers/x402";

/**
 * The in-process facilitator checks a plain account's EIP-3009 payment natively (payments/eip3009.ts) instead of
 * through x402's own `exact` facilitator (@x402/evm, which recovers the signer in JavaScript). Each case here is
 * verified both ways, on the same chain at the same moment: the verdicts and reasons must be the library's.
 */
describe("e2e: x402 verification, native beside the library", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let chain: Chain;
  let facilitator: InProcessFacilitator;
  let requirements: PaymentRequirements;
  let payer: Wallet;

  const decode = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8")) as PaymentPayload;
  const pay = async (wallet: Wallet, o: PaymentOverrides = {}) => decode(await payWithEthers(wallet, requirements, o));
  const both = async (payload: PaymentPayload, against = requirements) => ({
    native: await verifyPlainTransferAuthorization(chain, payload, against),
    library: await facilitator.verifyWithLibrary(payload, against),
  });

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    chain = service.services.chains.find(84532)!;
    const wallet = new KeySigner(Wallet.createRandom().privateKey);
    facilitator = new InProcessFacilitator(service.services, chain, wallet, () =>
      healWalletNonces(service.services, chain, wallet, service.services.logger),
    );
    requirements = service.services.x402!.requirements({
      amount: 10_000n,
      routeKey: "POST /send-transactions",
      subject: "test",
      resourceUrl: "http://test/",
      description: "test",
    });
    payer = sandbox.accounts[2];
  });
  after(async () => {
    await service?.stop();
  });

  it("gives the library's verdict and reason for valid and refused payments", async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = new Wallet(Wallet.createRandom().privateKey);
    const cases: [string, PaymentPayload, PaymentRequirements, boolean, string | undefined][] = [
      ["valid", await pay(payer), requirements, true, undefined],
      [
        "expired",
        await pay(payer, { validAfter: now - 900, validBefore: now - 300 }),
        requirements,
        false,
        "invalid_exact_evm_payload_authorization_valid_before",
      ],
      [
        "about to expire",
        await pay(payer, { validBefore: now + 3 }),
        requirements,
        false,
        "invalid_exact_evm_payload_authorization_valid_before",
      ],
      [
        "not yet valid",
        await pay(payer, { validAfter: now + 3600, validBefore: now + 7200 }),
        requirements,
        false,
        "invalid_exact_evm_payload_authorization_valid_after",
      ],
      [
        "under-paid",
        await pay(payer, { value: "9999" }),
        requirements,
        false,
        "invalid_exact_evm_payload_authorization_value_mismatch",
      ],
      [
        "to another recipient",
        await pay(payer, { payTo: stranger.address }),
        requirements,
        false,
        "invalid_exact_evm_recipient_mismatch",
      ],
      [
        "signed by another key",
        await pay(stranger, { from: payer.address }),
        requirements,
        false,
        "invalid_exact_evm_signature",
      ],
      [
        "signed for another chain",
        await pay(payer, { chainId: 11155111 }),
        requirements,
        false,
        "invalid_exact_evm_signature",
      ],
      [
        "over another token's domain",
        await pay(payer),
        { ...requirements, extra: { ...requirements.extra, name: "Not USDC" } },
        false,
        "invalid_exact_evm_signature",
      ],
      [
        "without a domain",
        await pay(payer),
        { ...requirements, extra: { ...requirements.extra, version: "" } },
        false,
        "invalid_exact_evm_missing_eip712_domain",
      ],
      [
        "another scheme",
        await pay(payer, { accepted: { ...requirements, scheme: "upto" } }),
        requirements,
        false,
        "invalid_exact_evm_scheme",
      ],
      [
        "another network accepted",
        await pay(payer, { accepted: { ...requirements, network: "eip155:11155111" } }),
        requirements,
        false,
        "invalid_exact_evm_network_mismatch",
      ],
      ["a payer without USDC", await pay(stranger), requirements, false, "invalid_exact_evm_insufficient_balance"],
    ];
    for (const [label, payload, against, isValid, reason] of cases) {
      const { native, library } = await both(payload, against);
      expect(library, `library: ${label}`).to.include({ isValid, invalidReason: reason });
      expect(native, `native: ${label}`).to.deep.equal({
        isValid,
        invalidReason: reason,
        payer: (payload.payload as { authorization: { from: string } }).authorization.from,
      });
    }
  });

  it("refuses an authorization already used on chain, as the library does", async () => {
    const payload = await pay(payer);
    const { authorization, signature } = payload.payload as {
      authorization: Record<string, string>;
      signature: string;
    };
    const { v, r, s } = Signature.from(signature);
    const usdc = USDC__factory.connect(
      requirements.asset,
      sandbox.accounts[0].connect(providerFor(sandbox.baseSepolia)),
    );
    const args = [
      authorization.from,
      authorization.to,
      authorization.value,
      authorization.validAfter,
      authorization.validBefore,
      authorization.nonce,
      v,
      r,
      s,
    ] as const;
    await (
      await usdc["transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)"](
        ...args,
      )
    ).wait();
    const { native, library } = await both(payload);
    expect(library).to.include({ isValid: false, invalidReason: "invalid_exact_evm_nonce_already_used" });
    expect(native).to.deep.equal({
      isValid: false,
      invalidReason: "invalid_exact_evm_nonce_already_used",
      payer: payer.address,
    });
  });

  it("leaves to the library what it does not check itself: a payer with code, an unusual encoding, another chain", async () => {
    const usdc = requirements.asset;
    const fromContract = await pay(payer, { from: usdc });
    expect(await verifyPlainTransferAuthorization(chain, fromContract, requirements)).to.equal(undefined);
    expect(await facilitator.verify(fromContract, requirements)).to.deep.equal(
      await facilitator.verifyWithLibrary(fromContract, requirements),
    );

    const valid = await pay(payer);
    const inner = valid.payload as { authorization: Record<string, string>; signature: string };
    const hexValue = { ...valid, payload: { ...inner, authorization: { ...inner.authorization, value: "0x2710" } } };
    expect(await verifyPlainTransferAuthorization(chain, hexValue, requirements)).to.equal(undefined);
    const wrongChecksum = inner.authorization.from
      .replace(/[a-f]/, (c) => c.toUpperCase())
      .replace(/[A-F]/, (c) => c.toLowerCase());
    const badChecksum = {
      ...valid,
      payload: { ...inner, authorization: { ...inner.authorization, from: wrongChecksum } },
    };
    if (wrongChecksum !== inner.authorization.from) {
      expect(await verifyPlainTransferAuthorization(chain, badChecksum, requirements)).to.equal(undefined);
      expect(await facilitator.verify(badChecksum, requirements)).to.include({ isValid: false });
    }
    const erc6492 = { ...valid, payload: { ...inner, signature: inner.signature + "6492".repeat(16) } };
    expect(await verifyPlainTransferAuthorization(chain, erc6492, requirements)).to.equal(undefined);
    const otherChain = { ...requirements, network: "eip155:11155111" };
    expect(
      await verifyPlainTransferAuthorization(
        chain,
        await pay(payer, { network: "eip155:11155111", chainId: 11155111 }),
        otherChain as PaymentRequirements,
      ),
    ).to.equal(undefined);
  });
});
