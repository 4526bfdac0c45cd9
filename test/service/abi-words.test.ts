import { expect } from "chai";
import { AbiCoder, hexlify, type Interface, randomBytes, Wallet } from "ethers";
import { decodeAbi, encodeAbi, encodeCall, type AbiValue } from "../../service/chains/abi-words";
import { agentTokenFactoryInterface, parseEventLog, usdcInterface } from "../../service/chains/contracts";
import { agentTokenCreated } from "../../service/methods/agents/agent-create-token";
import { PaidRelayDelegate__factory } from "../../typechain-types";

/** service/chains/abi-words.ts against ethers' ABI encoder: the same bytes for every value, the same refusals. */
describe("ABI words (the hot x402 path's encoder) against ethers", () => {
  const abi = AbiCoder.defaultAbiCoder();
  const address = () => Wallet.createRandom().address;
  const uint = () => BigInt(hexlify(randomBytes(1 + Math.floor(Math.random() * 32))));
  const bytes32 = () => hexlify(randomBytes(32));
  const bytes = (n: number) => hexlify(randomBytes(n));

  it("encodes addresses, uint256s (0 and 2^256 − 1 too), bytes32s and byte strings of every length around a word as ethers does", () => {
    for (const length of [0, 1, 31, 32, 33, 63, 64, 65, 228, 1000]) {
      const values: AbiValue[] = [
        { address: address() },
        { bytes: bytes(length) },
        { uint: uint() },
        { bytes32: bytes32() },
        { bytes: bytes(length + 3) },
        { uint: 0n },
        { uint: 2n ** 256n - 1n },
      ];
      const plain = values.map((v) => Object.values(v)[0] as unknown);
      const types = values.map((v) => Object.keys(v)[0].replace("uint", "uint256"));
      expect("0x" + encodeAbi(values), `length ${length}`).to.equal(abi.encode(types, plain));
    }
  });

  it("transferWithAuthorization in both forms and settleAndCall: the calldata ethers' interfaces encode", () => {
    const head = [address(), address(), uint(), uint(), uint(), bytes32()] as const;
    const headValues: AbiValue[] = [
      { address: head[0] },
      { address: head[1] },
      { uint: head[2] },
      { uint: head[3] },
      { uint: head[4] },
      { bytes32: head[5] },
    ];
    const vrs = usdcInterface.getFunction(
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
    );
    const [r, s] = [bytes32(), bytes32()];
    expect(encodeCall(vrs.selector, [...headValues, { uint: 28n }, { bytes32: r }, { bytes32: s }])).to.equal(
      (usdcInterface as Interface).encodeFunctionData(vrs, [...head, 28, r, s]),
    );
    const withBytes = usdcInterface.getFunction(
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
    );
    const signature = bytes(65 + 32);
    expect(encodeCall(withBytes.selector, [...headValues, { bytes: signature }])).to.equal(
      (usdcInterface as Interface).encodeFunctionData(withBytes, [...head, signature]),
    );
    const delegate = PaidRelayDelegate__factory.createInterface();
    const [asset, target, settlement, data] = [address(), address(), bytes(228), bytes(100)];
    expect(
      encodeCall(delegate.getFunction("settleAndCall").selector, [
        { address: asset },
        { bytes: settlement },
        { address: target },
        { bytes: data },
      ]),
    ).to.equal(delegate.encodeFunctionData("settleAndCall", [asset, settlement, target, data]));
  });

  it("accepts a lower-case address and upper-case hex, as ethers does", () => {
    const a = address();
    const n = bytes32().toUpperCase().replace("0X", "0x");
    expect("0x" + encodeAbi([{ address: a.toLowerCase() }, { bytes32: n }, { bytes: "0xABCD" }])).to.equal(
      abi.encode(["address", "bytes32", "bytes"], [a.toLowerCase(), n, "0xABCD"]),
    );
  });

  it("refuses what ethers refuses: a wrong checksum, a number outside uint256, a bytes32 of another length, odd or non-hex bytes", () => {
    const a = address();
    const wrongChecksum =
      a.slice(0, 2) +
      [...a.slice(2)].map((c) => (/[a-f]/.test(c) ? c.toUpperCase() : /[A-F]/.test(c) ? c.toLowerCase() : c)).join("");
    const refused: [AbiValue, string][] = [
      [{ address: wrongChecksum }, "address"],
      [{ address: a.slice(0, 41) }, "address"],
      [{ uint: -1n }, "uint256"],
      [{ uint: 2n ** 256n }, "uint256"],
      [{ bytes32: bytes(31) }, "bytes32"],
      [{ bytes: "0xabc" }, "bytes"],
      [{ bytes: "abcd" }, "bytes"],
      [{ bytes: "0xzz" }, "bytes"],
    ];
    for (const [value, type] of refused) {
      const raw = Object.values(value)[0];
      expect(
        () => encodeAbi([value]),
        JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)),
      ).to.throw();
      expect(() => abi.encode([type], [raw]), `ethers refuses ${String(raw)} too`).to.throw();
    }
  });

  const strings = [
    "",
    "A",
    "Agent token",
    "x".repeat(31),
    "y".repeat(32),
    "z".repeat(33),
    "Ünïcödé 名前 🚀",
    "🚀".repeat(40),
  ];

  it("encodes UTF-8 strings as ethers does, and createAgentToken's calldata as the factory's interface does", () => {
    for (const text of strings) {
      expect(
        "0x" + encodeAbi([{ string: text }, { uint: 18n }, { string: text + "!" }]),
        JSON.stringify(text),
      ).to.equal(abi.encode(["string", "uint256", "string"], [text, 18n, text + "!"]));
    }
    const create = agentTokenFactoryInterface.getFunction("createAgentToken");
    const [wallet, premint] = [address(), uint()];
    expect(
      encodeCall(create.selector, [
        { string: "Agent Ünï 🚀" },
        { string: "AGT1" },
        { uint: 6n },
        { address: wallet },
        { uint: premint },
      ]),
    ).to.equal(
      agentTokenFactoryInterface.encodeFunctionData("createAgentToken", ["Agent Ünï 🚀", "AGT1", 6, wallet, premint]),
    );
    // A lone surrogate has no UTF-8 form: both refuse it.
    expect(() => encodeAbi([{ string: "bad \ud800 name" }])).to.throw();
    expect(() => abi.encode(["string"], ["bad \ud800 name"])).to.throw();
  });

  it("decodes what ethers decodes: addresses, uints and strings, and AgentTokenCreated logs as parseEventLog reads them", () => {
    for (const text of strings) {
      const values = [address(), uint(), text, 0n, text.toUpperCase() + "2"];
      const data = abi.encode(["address", "uint256", "string", "uint256", "string"], values);
      expect(decodeAbi(["address", "uint", "string", "uint", "string"], data)).to.deep.equal([
        ...abi.decode(["address", "uint256", "string", "uint256", "string"], data),
      ]);
    }
    const event = agentTokenFactoryInterface.getEvent("AgentTokenCreated");
    for (const [i, name] of strings.filter(Boolean).entries()) {
      const args = [address(), address(), address(), name, `S${i}`, i % 19, uint()];
      const log = agentTokenFactoryInterface.encodeEventLog(event, args);
      const theirs = parseEventLog(agentTokenFactoryInterface, log)!.args;
      expect(agentTokenCreated(log)).to.deep.equal({
        token: theirs.token,
        agentWallet: theirs.agentWallet,
        creator: theirs.creator,
        name: theirs.name,
        symbol: theirs.symbol,
        decimals: theirs.decimals,
        premint: theirs.premint,
      });
    }
    // Another event of the factory, or another contract's, is not it.
    const other = usdcInterface.encodeEventLog(usdcInterface.getEvent("Transfer"), [address(), address(), 5n]);
    expect(agentTokenCreated(other)).to.equal(undefined);
  });

  it("refuses to decode what ethers refuses: data cut short, a string pointing past the end, bytes that are not UTF-8; and an address word with high bits", () => {
    const data = abi.encode(["address", "string"], [address(), "a name longer than one word of thirty-two bytes"]);
    const cases: [string, string[]][] = [
      [data.slice(0, data.length - 64), ["address", "string"]],
      [abi.encode(["uint256", "uint256"], [2n ** 20n, 0n]), ["string", "uint"]],
      [abi.encode(["bytes"], ["0xc328"]), ["string"]],
    ];
    for (const [bad, types] of cases) {
      expect(() => decodeAbi(types as ("address" | "uint" | "string")[], bad), bad.slice(0, 80)).to.throw();
      // ethers defers an item's error until the item is read: reading them all throws it.
      expect(
        () =>
          abi
            .decode(
              types.map((t) => (t === "uint" ? "uint256" : t)),
              bad,
            )
            .toArray(),
        `ethers refuses ${bad.slice(0, 80)} too`,
      ).to.throw();
    }
    // Stricter than ethers, which drops them: an address word with bits above its 20 bytes (no Solidity address has any).
    expect(() => decodeAbi(["address", "string"], "0x" + "ff".repeat(12) + data.slice(26))).to.throw(
      /not an address word/,
    );
  });
});
