import { expect } from "chai";
import { Wallet } from "ethers";
import { ConfigError, loadConfig } from "../../service/config";

/** RELAYER_EXTRA_PRIVATE_KEYS[_<chainId>]: the relayer's further keys, checked when the configuration is read. */
describe("configuration: the relayer's extra keys", () => {
  const [home, settlement, a, b, c] = Array.from({ length: 5 }, () => Wallet.createRandom().privateKey);
  const base = {
    RPC_URL_11155111: "http://127.0.0.1:1",
    RPC_URL_84532: "http://127.0.0.1:2",
    RELAYER_PRIVATE_KEY: home,
    X402_SETTLEMENT_PRIVATE_KEY: settlement,
  };
  const load = (env: Record<string, string>) => loadConfig({ ...base, ...env }, { profile: "local" });

  it("apply to every chain with a relayer key; RELAYER_EXTRA_PRIVATE_KEYS_<chainId> replaces them for one chain", () => {
    const config = load({ RELAYER_EXTRA_PRIVATE_KEYS: ` ${a}, ${b} `, RELAYER_EXTRA_PRIVATE_KEYS_84532: c });
    expect(config.relayerExtraKeys.get(11155111)).to.deep.equal([a, b]);
    expect(config.relayerExtraKeys.get(84532)).to.deep.equal([c]);
    expect(load({}).relayerExtraKeys.size).to.equal(0);
  });

  it("refuse a malformed key, a key given twice, and the relayer's or the settlement key, naming the variable and the key's position", () => {
    const refused: [Record<string, string>, RegExp][] = [
      [
        { RELAYER_EXTRA_PRIVATE_KEYS: `${a},0x1234` },
        /RELAYER_EXTRA_PRIVATE_KEYS: key 2: must be a 0x-prefixed 32-byte hex private key/,
      ],
      [
        { RELAYER_EXTRA_PRIVATE_KEYS: `${a},${a.toUpperCase().replace("0X", "0x")}` },
        /RELAYER_EXTRA_PRIVATE_KEYS: key 2 is given twice/,
      ],
      [
        { RELAYER_EXTRA_PRIVATE_KEYS: home },
        /RELAYER_EXTRA_PRIVATE_KEYS: key 1 is given twice, or is the relayer's or the settlement key/,
      ],
      [
        { RELAYER_EXTRA_PRIVATE_KEYS_84532: `${b},${settlement}` },
        /RELAYER_EXTRA_PRIVATE_KEYS_84532: key 2 is given twice, or is the relayer's or the settlement key/,
      ],
    ];
    for (const [env, message] of refused) expect(() => load(env), JSON.stringify(env)).to.throw(ConfigError, message);
  });

  it("never show a key in the error", () => {
    try {
      load({ RELAYER_EXTRA_PRIVATE_KEYS: `${a},${a}` });
      expect.fail("accepted");
    } catch (error) {
      expect((error as Error).message).to.not.include(a.slice(2));
    }
  });
});
