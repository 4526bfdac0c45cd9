import { expect } from "chai";
import { Wallet, verifyTypedData } from "ethers";
import { agentTokenInterface, identityRegistryInterface, multicall3Interface } from "../../service/chains/contracts";
import { PaymentRefused, signPayment } from "../../service/mcp/stdio/payer";
import { SettingsError, settingsFromEnv } from "../../service/mcp/stdio/settings";
import {
  addressesIn,
  verifyPrepared,
  VerificationError,
  type PreparedTransaction,
} from "../../service/mcp/stdio/verify";

/**
 * What the stdio server checks on its own, before it signs anything with the local wallet: the prepared transactions
 * against the request (a service answering something else is refused), the x402 requirements it is asked to pay, and
 * its configuration.
 */
describe("MCP stdio server: its checks before signing", () => {
  const wallet = new Wallet("0x" + "5a".repeat(32));
  /** The error a promise rejects with (the test fails when it resolves). */
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("it should have been refused"),
      (error: unknown) => error as Error,
    );
  const token = "0x1111111111111111111111111111111111111111";
  const recipient = "0x2222222222222222222222222222222222222222";
  const stranger = "0x3333333333333333333333333333333333333333";
  const registry = "0x4444444444444444444444444444444444444444";
  const request = { chainId: "14a34", tokenAddress: token, to: recipient, amount: "5" };
  const known = new Set([...addressesIn(request), registry.toLowerCase()]);
  const context = { wallet: wallet.address, chainId: 84532, known };
  const transfer = (to: string): PreparedTransaction => ({
    from: wallet.address,
    to: token,
    value: "0x00",
    chainId: 84532,
    data: agentTokenInterface.encodeFunctionData("transfer", [to, 5n * 10n ** 18n]),
  });

  const refusal = (transactions: PreparedTransaction[]) => {
    try {
      verifyPrepared(transactions, context);
    } catch (error) {
      expect(error).to.be.instanceOf(VerificationError);
      return error as VerificationError;
    }
    throw new Error("verifyPrepared accepted what it should refuse");
  };

  it("accepts the transactions the request asked for and says what each calls", () => {
    const calls = verifyPrepared(
      [
        transfer(recipient),
        {
          from: wallet.address,
          to: registry,
          value: "0x0",
          chainId: 84532,
          data: identityRegistryInterface.encodeFunctionData("register", ["https://a.example/r.json"]),
        },
      ],
      context,
    );
    expect(calls).to.deep.equal([
      {
        to: token,
        function: "transfer(address,uint256)",
        arguments: { to: recipient, value: (5n * 10n ** 18n).toString() },
      },
      { to: registry, function: "register(string)", arguments: { agentURI: "https://a.example/r.json" } },
    ]);
  });

  it("refuses a recipient the request did not name, another sender, another chain, ether, an unknown target or function", () => {
    expect(refusal([transfer(recipient), transfer(stranger)])).to.include({ transactionIndex: 1, field: "data" });
    expect(refusal([transfer(stranger)]).message).to.match(/names 0x3333333333333333333333333333333333333333 as to/);
    expect(refusal([{ ...transfer(recipient), from: stranger }])).to.include({ field: "from" });
    expect(refusal([{ ...transfer(recipient), chainId: 8453 }])).to.include({ field: "chainId" });
    expect(refusal([{ ...transfer(recipient), value: "0x1" }])).to.include({ field: "value" });
    expect(refusal([{ ...transfer(recipient), to: stranger }])).to.include({ field: "to" });
    const hidden = multicall3Interface.encodeFunctionData("aggregate3", [
      [{ target: token, allowFailure: false, callData: "0x" }],
    ]);
    expect(refusal([{ ...transfer(recipient), data: hidden }]).message).to.match(
      /no function of this project's contracts/,
    );
    expect(refusal([])).to.include({ field: "transactions" });
  });

  it("signs an x402 exact payment the service's way (EIP-3009 over the asset's domain) and refuses one above TAK_MAX_PAYMENT or of another scheme", async () => {
    const requirement = {
      scheme: "exact",
      network: "eip155:84532",
      asset: token,
      amount: "10000",
      payTo: recipient,
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    const payload = (await signPayment(wallet, requirement, 1_000_000n)) as {
      accepted: unknown;
      payload: { signature: string; authorization: Record<string, string> };
    };
    expect(payload.accepted).to.deep.equal(requirement);
    const { authorization, signature } = payload.payload;
    expect(authorization).to.include({ from: wallet.address, to: recipient, value: "10000" });
    const types = {
      TransferWithAuthorization: [
        "from:address",
        "to:address",
        "value:uint256",
        "validAfter:uint256",
        "validBefore:uint256",
        "nonce:bytes32",
      ].map((f) => ({ name: f.split(":")[0], type: f.split(":")[1] })),
    };
    expect(
      verifyTypedData(
        { name: "USDC", version: "2", chainId: 84532, verifyingContract: token },
        types,
        authorization,
        signature,
      ),
    ).to.equal(wallet.address);
    for (const [refused, reason] of [
      [signPayment(wallet, requirement, 9_999n), /more than TAK_MAX_PAYMENT/],
      [signPayment(wallet, { ...requirement, scheme: "upto" }, 1_000_000n), /only "exact"/],
      [signPayment(wallet, { ...requirement, network: "solana:mainnet" }, 1_000_000n), /not an EVM network/],
    ] as const) {
      const error = await rejection(refused);
      expect(error).to.be.instanceOf(PaymentRefused);
      expect(error.message).to.match(reason);
    }
  });

  it("reads its configuration from the environment; a wrong value names its variable and never shows a key", () => {
    const key = "0x" + "ab".repeat(32);
    const settings = settingsFromEnv({
      TAK_BASE_URL: "http://127.0.0.1:3999/",
      TAK_PRIVATE_KEY: key,
      TAK_MAX_PAYMENT: "0.25",
    });
    expect(settings).to.include({ baseUrl: "http://127.0.0.1:3999", maxPayment: 250_000n });
    expect(settings.wallet!.address).to.equal(new Wallet(key).address);
    expect(() => settingsFromEnv({})).to.throw(SettingsError, /^TAK_BASE_URL is required/);
    expect(() => settingsFromEnv({ TAK_BASE_URL: "not a url" })).to.throw(SettingsError, /^TAK_BASE_URL must be a URL/);
    const secret = "cd".repeat(31);
    expect(() => settingsFromEnv({ TAK_BASE_URL: "http://x", TAK_PRIVATE_KEY: secret }))
      .to.throw(SettingsError, /^TAK_PRIVATE_KEY must be a private key/)
      .and.satisfy((e: unknown) => !String(e).includes(secret));
    expect(() => settingsFromEnv({ TAK_BASE_URL: "http://x", TAK_MAX_PAYMENT: "1.1234567" })).to.throw(
      SettingsError,
      /^TAK_MAX_PAYMENT /,
    );
  });
});
