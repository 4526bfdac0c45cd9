import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, verifyTypedData, ZeroHash } from "ethers";
import {
  agentTokenInterface,
  identityRegistryInterface,
  multicall3Interface,
  tokenFactoryInterface,
  usdcInterface,
} from "../../service/chains/contracts";
import { PUBLIC_METHODS } from "../../service/methods";
import { INTENTS } from "../../service/mcp/stdio/intents";
import type { IntentContext } from "../../service/mcp/stdio/intent";
import { CallBudget, MAX_VALIDITY_SECONDS, Payer, PaymentRefused } from "../../service/mcp/stdio/payer";
import { PinError, Pins } from "../../service/mcp/stdio/pins";
import { SettingsError, settingsFromEnv } from "../../service/mcp/stdio/settings";
import {
  addressesIn,
  verifyPrepared,
  VerificationError,
  type PreparedTransaction,
} from "../../service/mcp/stdio/verify";

/**
 * What the stdio server checks on its own, before it signs anything with the local wallet: the prepared transactions
 * against what the method produces for the request (a service answering something else is refused), the x402
 * requirements it is asked to pay and what it may spend, and its configuration. The hostile-service e2e test
 * (mcp-stdio-hostile) runs the same checks against a tampering proxy.
 */
describe("MCP stdio server: its checks before signing", () => {
  const wallet = new Wallet("0x" + "5a".repeat(32));
  const usdc = "0x1111111111111111111111111111111111111111";
  const recipient = "0x2222222222222222222222222222222222222222";
  const stranger = "0x3333333333333333333333333333333333333333";
  const registry = "0x4444444444444444444444444444444444444444";
  const agentToken = "0x5555555555555555555555555555555555555555";
  const payTo = "0x6666666666666666666666666666666666666666";
  const factory = "0x7777777777777777777777777777777777777777";
  const GWEI = 1_000_000_000n;
  const ctx: IntentContext = {
    chainId: 84532,
    wallet: wallet.address,
    contracts: async () => ({ source: "file", USDC: usdc, IdentityRegistry: registry, TokenFactory: factory }),
    token: async () => {
      throw new Error("no token in this test");
    },
    agentTokenDecimals: async (_a, given) => Number(given ?? 18),
    executor: () => registry,
  };
  const tx = (to: string, data: string, extra: Partial<PreparedTransaction> = {}): PreparedTransaction => ({
    from: wallet.address,
    to,
    value: "0x00",
    chainId: 84532,
    data,
    gasLimit: "0x10000",
    maxFeePerGas: String(3n * GWEI),
    maxPriorityFeePerGas: String(GWEI),
    ...extra,
  });
  const transferRequest = { chainId: "14a34", tokenSymbol: "USDC", to: recipient, amount: "1" };
  const check = async (
    method: string,
    request: Record<string, unknown>,
    transactions: PreparedTransaction[],
    feeCap = 100n * GWEI,
  ) => {
    const definition = PUBLIC_METHODS.find((m) => m.name === method)!;
    const body = definition.body.parse({ signerAddress: wallet.address, ...request });
    const expected = await INTENTS[method].calls(body, { ...ctx, firstTarget: transactions[0]?.to });
    return verifyPrepared(transactions, expected, {
      wallet: wallet.address,
      chainId: 84532,
      feeCap,
      named: addressesIn(request),
    });
  };
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      expect(error).to.be.instanceOf(VerificationError);
      return error as VerificationError;
    }
    throw new Error("the check accepted what it should refuse");
  };
  const transfer = (to: string, units: bigint) => usdcInterface.encodeFunctionData("transfer", [to, units]);

  it("has the intent of every prepare method", () => {
    expect(PUBLIC_METHODS.map((m) => m.name).filter((name) => !INTENTS[name])).to.deep.equal([]);
  });

  it("accepts the transactions the request asked for and says what each calls", async () => {
    const calls = await check("transferTo", transferRequest, [tx(usdc, transfer(recipient, 1_000_000n))]);
    expect(calls).to.deep.equal([
      {
        to: usdc,
        contract: "USDC",
        function: "transfer(address,uint256)",
        arguments: { to: recipient, value: "1000000" },
      },
    ]);
    const register = identityRegistryInterface.encodeFunctionData("register", ["https://a.example/r.json"]);
    expect(
      (
        await check(
          "agentRegister",
          {
            chainId: "14a34",
            name: "a",
            description: "d",
            image: "https://x/a.png",
            services: [{ name: "n", endpoint: "e" }],
          },
          [tx(registry, register)],
        )
      )[0],
    ).to.include({
      function: "register(string)",
    });
  });

  it("holds a tokenization to its holders and premints, as the service pairs them (initialHolders first)", async () => {
    const request = {
      chainId: "aa36a7",
      tokenizerEmail: "i@example.com",
      name: "Acme",
      tokenSymbol: "ACME",
      preMints: [
        { amount: "100", investorAddress: stranger },
        { amount: "2.5", investorAddress: recipient },
      ],
      initialHolders: [{ walletAddress: recipient }, {}],
    };
    const params = (holders: string[], preMints: bigint[]) =>
      tokenFactoryInterface.encodeFunctionData("newTokenization", [
        {
          name: "Acme",
          symbol: "ACME",
          decimals: 18,
          supplyCap: 0n,
          paymentToken: usdc,
          initialHolders: holders,
          initialInvestorIds: holders.map(() => ZeroHash),
          preMints,
        },
      ]);
    const honest = params([recipient, recipient], [100n * 10n ** 18n, 25n * 10n ** 17n]);
    expect((await check("newTokenization", request, [tx(factory, honest)]))[0].function).to.match(/^newTokenization\(/);
    const swapped = params([stranger, recipient], [100n * 10n ** 18n, 25n * 10n ** 17n]);
    expect((await refusal(check("newTokenization", request, [tx(factory, swapped)]))).message).to.match(
      /initialHolders: are not the holders asked/,
    );
    const approval = tx(usdc, usdcInterface.encodeFunctionData("approve", [factory, 2n ** 256n - 1n]));
    expect((await refusal(check("newTokenization", request, [approval, tx(factory, honest)]))).message).to.match(
      /transaction 1: it calls 0x1111111111111111111111111111111111111111, not the TokenFactory/,
    );
  });

  it("refuses every tampering: the amount, a recipient the request did not name, a call appended, another function or contract, fees, gas, sender, chain, ether", async () => {
    const honest = tx(usdc, transfer(recipient, 1_000_000n));
    const cases: [string, PreparedTransaction[], string, RegExp][] = [
      [
        "100,000 USDC when 1 was asked",
        [tx(usdc, transfer(recipient, 100_000_000_000n))],
        "data",
        /value 100000000000 is not 1 USDC/,
      ],
      [
        "a recipient only the service named",
        [tx(usdc, transfer(stranger, 1_000_000n))],
        "data",
        /to 0x3333.* is not the recipient asked/,
      ],
      [
        "approve(MAX) appended",
        [honest, tx(usdc, usdcInterface.encodeFunctionData("approve", [stranger, 2n ** 256n - 1n]))],
        "transactions",
        /a transaction the method does not produce/,
      ],
      [
        "another function",
        [tx(usdc, usdcInterface.encodeFunctionData("approve", [recipient, 1_000_000n]))],
        "data",
        /calls approve\(address,uint256\), not transfer/,
      ],
      ["another contract", [tx(stranger, transfer(recipient, 1_000_000n))], "to", /not USDC/],
      [
        "fees of 100,000 gwei",
        [{ ...honest, maxFeePerGas: String(100_000n * GWEI) }],
        "maxFeePerGas",
        /100,000 gwei is above the 100 gwei/,
      ],
      [
        "a tip above the fee cap",
        [{ ...honest, maxPriorityFeePerGas: String(4n * GWEI) }],
        "maxPriorityFeePerGas",
        /above its fee cap/,
      ],
      [
        "gas beyond the method's bound",
        [{ ...honest, gasLimit: "30000000" }],
        "gasLimit",
        /above the 400000 transfer may take/,
      ],
      ["another sender", [{ ...honest, from: stranger }], "from", /not this server's wallet/],
      ["another chain", [{ ...honest, chainId: 1 }], "chainId", /chain 1, not chain 84532/],
      ["ether attached", [{ ...honest, value: "0x1" }], "value", /wei of ether/],
      [
        "a call hidden in a multicall",
        [
          tx(
            usdc,
            multicall3Interface.encodeFunctionData("aggregate3", [
              [{ target: usdc, allowFailure: false, callData: "0x" }],
            ]),
          ),
        ],
        "data",
        /not transfer/,
      ],
      ["nothing", [], "transactions", /no transactions/],
    ];
    for (const [what, transactions, field, message] of cases) {
      const error = await refusal(check("transferTo", transferRequest, transactions));
      expect(error.field, what).to.equal(field);
      expect(error.message, what)
        .to.match(message)
        .and.match(/nothing was signed/);
    }
    // An agent token's approval: the spender is the request's, the amount the request's in the token's decimals.
    const approve = (spender: string, units: bigint) =>
      tx(agentToken, agentTokenInterface.encodeFunctionData("approve", [spender, units]));
    const request = {
      chainId: "14a34",
      tokenAddress: agentToken,
      spenderAddress: recipient,
      amount: "2",
      decimals: "6",
    };
    expect(await check("agentApproveToken", request, [approve(recipient, 2_000_000n)])).to.have.length(1);
    expect((await refusal(check("agentApproveToken", request, [approve(stranger, 2_000_000n)]))).message).to.match(
      /spender/,
    );
    expect(
      (await refusal(check("agentApproveToken", request, [approve(recipient, 2n ** 256n - 1n)]))).message,
    ).to.match(/value/);
  });

  it("pays x402 only on a payment network, in the pinned USDC, to the session's payee, for minutes, within TAK_MAX_PAYMENT per call and TAK_MAX_SPEND per session", async () => {
    const pins = new Pins(async () => ({ USDCAddress: usdc }), path.join(os.tmpdir(), "no-deployments-here"));
    const payer = new Payer(wallet, pins, { maxPayment: 5_000n, maxSpend: 12_000n });
    const requirement = {
      scheme: "exact",
      network: "eip155:84532",
      asset: usdc,
      amount: "4000",
      payTo,
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    const budget = new CallBudget();
    const payload = (await payer.sign(requirement, budget)) as {
      payload: { signature: string; authorization: Record<string, string> };
    };
    const { authorization, signature } = payload.payload;
    expect(authorization).to.include({ from: wallet.address, to: payTo, value: "4000" });
    expect(Number(authorization.validBefore) - Date.now() / 1000).to.be.within(290, 301);
    const types = {
      TransferWithAuthorization: [
        "from:address",
        "to:address",
        "value:uint256",
        "validAfter:uint256",
        "validBefore:uint256",
        "nonce:bytes32",
      ].map((f) => ({
        name: f.split(":")[0],
        type: f.split(":")[1],
      })),
    };
    expect(
      verifyTypedData(
        { name: "USDC", version: "2", chainId: 84532, verifyingContract: usdc },
        types,
        authorization,
        signature,
      ),
    ).to.equal(wallet.address);
    const refused = async (changes: Partial<typeof requirement>, why: RegExp, inBudget = new CallBudget()) => {
      const error = await payer.sign({ ...requirement, ...changes }, inBudget).then(
        () => expect.fail(`paid ${JSON.stringify(changes)}`),
        (e: unknown) => e as Error,
      );
      expect(error).to.be.instanceOf(PaymentRefused);
      expect(error.message).to.match(why);
    };
    await refused({ network: "eip155:1" }, /eip155:1, not a payment network/);
    await refused({ asset: stranger }, /not the USDC of chain 84532/);
    await refused({ payTo: stranger }, /not 0x6666.*whom this session pays/);
    await refused({ network: "eip155:8453" }, /eip155:8453, not eip155:84532, where this session pays/);
    await refused(
      { maxTimeoutSeconds: 365 * 86_400 },
      new RegExp(`valid 31536000 s; this server signs at most ${MAX_VALIDITY_SECONDS} s`),
    );
    await refused({ scheme: "upto" }, /only "exact"/);
    // Two payments of one call count together: 4000 paid, 4000 more passes TAK_MAX_PAYMENT (5000).
    await refused({}, /after 0\.004 USDC already paid in this call, more than TAK_MAX_PAYMENT/, budget);
    await payer.sign(requirement, new CallBudget());
    await payer.sign({ ...requirement, amount: "3000" }, new CallBudget());
    expect(payer.spentInSession).to.equal(11_000n);
    await refused({ amount: "2000" }, /has paid 0\.011 USDC of the 0\.012 USDC TAK_MAX_SPEND allows/);
  });

  it("pins a chain's contracts: the deployment file's at start, else the service's first answer, and refuses a change", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-pins-"));
    const deployment = JSON.parse(
      fs.readFileSync(path.join(__dirname, "..", "..", "deployments", "deployment.schema.json"), "utf8"),
    );
    expect(deployment.properties.contracts).to.be.an("object");
    const contracts = Object.fromEntries(
      [
        "TokenFactory",
        "SecurityTokenImplementation",
        "StoEscrowImplementation",
        "BKN",
        "AgentTokenImplementation",
        "AgentTokenFactory",
        "IdentityRegistry",
        "ReputationRegistry",
        "AgentMandate",
        "ComplianceProvider",
        "USDC",
      ].map((name, i) => [name, `0x${String(i + 1).padStart(40, "a")}`]),
    );
    const file = {
      chainId: 84532,
      chainName: "Base Sepolia",
      currencyName: "ETH",
      blockExplorerUrl: "x",
      deploymentBlock: 0,
      deployer: payTo,
      deployedAt: "now",
      contracts,
    };
    fs.writeFileSync(path.join(dir, "84532.json"), JSON.stringify(file));
    let answer: Record<string, unknown> = { identityRegistryAddress: registry, USDCAddress: usdc };
    const pins = new Pins(async () => answer, dir);
    expect(pins.fileChains()).to.deep.equal([84532]);
    expect((await pins.contracts(84532)).IdentityRegistry).to.equal(contracts.IdentityRegistry.toLowerCase());
    expect((await pins.contracts(11155111)).IdentityRegistry).to.equal(registry);
    answer = { identityRegistryAddress: stranger, USDCAddress: usdc };
    const changed = await pins.contracts(11155111).catch((e: unknown) => e as Error);
    expect(changed).to.be.instanceOf(PinError);
    expect((changed as Error).message).to.match(/IdentityRegistry on chain 11155111 changed during this session/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads its configuration from the environment only; a wrong value names its variable and never shows a key", () => {
    const key = "0x" + "ab".repeat(32);
    const settings = settingsFromEnv({
      TAK_BASE_URL: "http://127.0.0.1:3999/",
      TAK_PRIVATE_KEY: key,
      TAK_MAX_PAYMENT: "0.25",
      TAK_MAX_SPEND: "2",
      TAK_MAX_FEE_GWEI: "1.5",
      TAK_RPC_URLS: "84532=http://127.0.0.1:9/rpc",
      TAK_READONLY: "1",
      TAK_TOOLSETS: "agents,rams",
    });
    expect(settings).to.include({
      baseUrl: "http://127.0.0.1:3999",
      maxPayment: 250_000n,
      maxSpend: 2_000_000n,
      maxFee: 1_500_000_000n,
      readOnly: true,
      toolsets: "agents,rams",
      confirm: "value-moving",
    });
    expect(settings.rpcUrls.get(84532)).to.equal("http://127.0.0.1:9/rpc");
    expect(settings.wallet!.address).to.equal(new Wallet(key).address);
    expect(settingsFromEnv({ TAK_BASE_URL: "http://x" })).to.include({
      maxPayment: 1_000_000n,
      maxSpend: 5_000_000n,
      readOnly: false,
      toolsets: "default",
    });
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
    expect(() => settingsFromEnv({ TAK_BASE_URL: "http://x", TAK_CONFIRM: "sometimes" })).to.throw(
      SettingsError,
      /^TAK_CONFIRM /,
    );
    expect(() => settingsFromEnv({ TAK_BASE_URL: "http://x", TAK_RPC_URLS: "base=http://x" })).to.throw(
      SettingsError,
      /^TAK_RPC_URLS /,
    );
  });
});
