import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { configurationMarkdown, envExample } from "../../scripts/lib/config-docs";
import { ChainRegistry } from "../../service/chains/registry";
import { NETWORKS } from "../../service/chains/networks";
import { ConfigError, loadConfig } from "../../service/config";
import { withEnvFile } from "../../service/configuration/env-file";
import { CHAIN_IDS_BY_NAME } from "../../service/configuration/names";
import { CHAIN_VARIABLES, variables } from "../../service/configuration/variables";
import { getSandbox } from "../helpers/sandbox";

const ROOT = path.resolve(__dirname, "../..");
const SECRETS = { ADMIN_TOKEN: "a".repeat(24), DATA_ENCRYPTION_KEY: "k".repeat(32) };
const refusal = (env: Record<string, string>, options: Parameters<typeof loadConfig>[1] = {}): string => {
  try {
    loadConfig(env, options);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

/** The configuration explains itself: one schema, a generated reference, and start errors that say what to change. */
describe("configuration: one schema, its reference, and the mistakes it catches", () => {
  it("docs/configuration.md and .env.example are what `npm run config:docs` writes from the schema (run it after changing a variable)", () => {
    expect(
      fs.readFileSync(path.join(ROOT, "docs", "configuration.md"), "utf8"),
      "docs/configuration.md is stale: npm run config:docs",
    ).to.equal(configurationMarkdown());
    expect(
      fs.readFileSync(path.join(ROOT, ".env.example"), "utf8"),
      ".env.example is stale: npm run config:docs",
    ).to.equal(envExample());
  });

  it("the reference names every variable with its default and rule; .env.example every production one, required secrets left empty", () => {
    const reference = configurationMarkdown();
    for (const name of Object.keys(variables)) expect(reference, name).to.include(`| \`${name}\``);
    for (const v of CHAIN_VARIABLES) expect(reference).to.include(`| \`${v.prefix}<chainId>\``);
    for (const name of [
      "DATABASE_SCHEMA",
      "SEND_WAIT_MS",
      "X402_DISABLED_CHAINS",
      "X402_MAX_TIMEOUT_SECONDS",
      "TRUST_PROXY",
    ])
      expect(reference).to.include(`| \`${name}\``);
    expect(reference).to.include("| `SEND_WAIT_MS` | `25000` | whole number ≥ 0 |");
    expect(reference).to.include("| `ADMIN_TOKEN` 🔒 | — | at least 24 characters |");
    const example = envExample().split("\n");
    for (const name of [
      "ENVIRONMENT",
      "HOST",
      "PORT",
      "PUBLIC_BASE_URL",
      "TRUST_PROXY",
      "DATABASE_URL",
      "ADMIN_TOKEN",
      "DATA_ENCRYPTION_KEY",
      "METRICS_TOKEN",
      "RPC_URL_11155111",
      "RPC_URL_84532",
      "RELAYER_PRIVATE_KEY",
      "X402_SETTLEMENT_PRIVATE_KEY",
    ]) {
      expect(
        example.some((line) => line.startsWith(`${name}=`)),
        name,
      ).to.equal(true);
    }
    for (const secret of ["ADMIN_TOKEN", "DATA_ENCRYPTION_KEY", "RELAYER_PRIVATE_KEY"])
      expect(example).to.include(`${secret}=`);
    // Loaded as it is, .env.example is refused for the secrets it leaves empty, not for a name.
    const parsed = Object.fromEntries(
      example.filter((l) => /^[A-Z]/.test(l)).map((l) => l.split("=", 2) as [string, string]),
    );
    const message = refusal(parsed);
    expect(message)
      .to.include("ADMIN_TOKEN: required outside the local sandbox")
      .and.include("DATA_ENCRYPTION_KEY: required outside the local sandbox");
    expect(message).to.not.include("is not a variable");
  });

  it("a name with one of our prefixes that is no variable, or a near miss of one, stops the start with the closest valid name", () => {
    const cases: [string, string][] = [
      ["RPC_URL_SEPOLIA", "RPC_URL_SEPOLIA is not a variable of this service (did you mean RPC_URL_11155111?)"],
      ["RPC_URL_BASE_SEPOLIA", "(did you mean RPC_URL_84532?)"],
      [
        "RPC_URL_GOERLI",
        "RPC_URL_GOERLI is not a variable of this service; per-chain variables end in a decimal chain id (RPC_URL_<chainId>, e.g. Sepolia 11155111",
      ],
      ["CONFIRMATION", "CONFIRMATION is not a variable of this service (did you mean CONFIRMATIONS?)"],
      ["CONFIRMATIONS_BASE", "(did you mean CONFIRMATIONS_8453?)"],
      ["X402_DISABLED_CHAIN", "(did you mean X402_DISABLED_CHAINS?)"],
      ["SEND_WAIT", "(did you mean SEND_WAIT_MS?)"],
      ["WEBHOOK_RETRIES", "WEBHOOK_RETRIES is not a variable of this service"],
      ["DATABSE_URL", "(did you mean DATABASE_URL?)"],
      ["SEPOLIA_RPC_URL", "SEPOLIA_RPC_URL is not a variable of this service (did you mean RPC_URL_11155111?)"],
      ["PORT_FILE", "PORT_FILE: PORT is not a secret, so it is not read from a file; set PORT itself"],
    ];
    for (const [name, message] of cases) expect(refusal({ ...SECRETS, [name]: "3" }), name).to.include(message);
    // Other software's variables are left alone.
    loadConfig({
      ...SECRETS,
      HOME: "/root",
      PATH: "/bin",
      PWD: "/",
      LANG: "C",
      LOCAL_BLOCK_TIME: "1",
      TEST_JOBS: "1",
      NODE_OPTIONS: "",
      HOSTNAME: "x",
      npm_config_x: "1",
      TEST_DATABASE_URL: "postgres://x",
    });
  });

  it("the chain names the hints know are the network table's", () => {
    const squeeze = (text: string) => text.toUpperCase().replace(/[^A-Z]/g, "");
    for (const [name, chainId] of Object.entries(CHAIN_IDS_BY_NAME)) {
      const network = NETWORKS.find((n) => n.chainId === chainId);
      expect(network, name).to.not.equal(undefined);
      expect(
        squeeze(network!.name).includes(squeeze(name).replace("MAINNET", "")) ||
          ["MAINNET", "ETHEREUM", "BSC", "BNB", "AVALANCHE"].includes(name),
        `${name} → ${network!.name}`,
      ).to.equal(true);
    }
  });

  it("every list is checked element by element, naming the element", () => {
    expect(refusal({ ...SECRETS, X402_DISABLED_CHAINS: "base" })).to.include(
      'X402_DISABLED_CHAINS: element 1 ("base"): not a decimal chain id; expected comma-separated decimal chain ids',
    );
    expect(refusal({ ...SECRETS, RPC_URL_84532: "http://a", X402_DISABLED_CHAINS: "84532,8453" })).to.include(
      "X402_DISABLED_CHAINS: chain 8453 is not served (no RPC_URL_8453)",
    );
    expect(
      loadConfig({ ...SECRETS, RPC_URL_84532: "http://a", X402_DISABLED_CHAINS: " 84532 " }).x402DisabledChains,
    ).to.deep.equal(new Set([84532]));
    expect(refusal({ ...SECRETS, WEBHOOK_RETRY_SCHEDULE: "5s,soon" })).to.include(
      'WEBHOOK_RETRY_SCHEDULE: element 2 ("soon"): "soon" is not a duration',
    );
    expect(refusal({ ...SECRETS, RPC_URL_84532: "http://a,ftp://b" })).to.include(
      'RPC_URL_84532: element 2 ("ftp://b"): not an http(s):// URL',
    );
    expect(refusal({ ...SECRETS, TRUST_PROXY: "10.0.0.0/8,10.0.0.0/33" })).to.include(
      'TRUST_PROXY: element 2 ("10.0.0.0/33") is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal',
    );
  });

  it("a per-chain variable for a chain without its RPC URL is an error, not a silent drop", () => {
    expect(refusal({ ...SECRETS, CONFIRMATIONS_8453: "3" })).to.include(
      "CONFIRMATIONS_8453: chain 8453 has no RPC_URL_8453, so it is not served",
    );
    expect(refusal({ ...SECRETS, RELAYER_PRIVATE_KEY_84532: Wallet.createRandom().privateKey })).to.include(
      "RELAYER_PRIVATE_KEY_84532: chain 84532 has no RPC_URL_84532",
    );
  });

  it("a configured chain that cannot be served (no deployment file, a network of the other environment) stops the start", async () => {
    const sandbox = await getSandbox();
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "tak-no-deployments-"));
    try {
      const config = loadConfig({ ...SECRETS, DEPLOYMENTS_DIR: empty, RPC_URL_84532: sandbox.baseSepolia.url });
      expect(() => new ChainRegistry(config)).to.throw(
        ConfigError,
        `RPC_URL_84532: no deployment file 84532.json in DEPLOYMENTS_DIR (${empty}); deploy there first`,
      );
      const production = loadConfig({
        ...SECRETS,
        ENVIRONMENT: "production",
        DEPLOYMENTS_DIR: sandbox.deploymentsDir,
        RPC_URL_84532: sandbox.baseSepolia.url,
      });
      expect(() => new ChainRegistry(production)).to.throw(
        ConfigError,
        "RPC_URL_84532: Base Sepolia is a sandbox network, not served with ENVIRONMENT=production; remove RPC_URL_84532 or set ENVIRONMENT=sandbox",
      );
      // Sepolia is served in production too (RAMS only).
      const rams = new ChainRegistry(
        loadConfig({
          ...SECRETS,
          ENVIRONMENT: "production",
          DEPLOYMENTS_DIR: sandbox.deploymentsDir,
          RPC_URL_11155111: sandbox.sepolia.url,
        }),
      );
      expect(rams.find(11155111)?.areas).to.deep.equal(["rams"]);
      rams.destroy();
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it("outside the local sandbox, ADMIN_TOKEN and DATA_ENCRYPTION_KEY are required, each named; the local sandbox makes its own", () => {
    const message = refusal({});
    expect(message).to.match(
      /^Invalid configuration: ADMIN_TOKEN: required outside the local sandbox \(.*; or ADMIN_TOKEN_FILE naming a file that holds it\); DATA_ENCRYPTION_KEY: required outside the local sandbox/,
    );
    expect(refusal({ ADMIN_TOKEN: "a".repeat(24) })).to.not.include("ADMIN_TOKEN:");
    expect(loadConfig({}, { profile: "local" }).profile).to.equal("local");
    expect(loadConfig(SECRETS).profile).to.equal("production");
    // The admin tool reads the same configuration without the service's secrets.
    expect(loadConfig({}, { tool: "admin" }).profile).to.equal("production");
  });

  it("a secret from <NAME>_FILE: trailing newline dropped; both given, an unreadable or empty file are errors naming the variable, never the value", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-secrets-"));
    try {
      const file = (name: string, content: string) => {
        const at = path.join(dir, name);
        fs.writeFileSync(at, content, { mode: 0o600 });
        return at;
      };
      const key = Wallet.createRandom().privateKey;
      const config = loadConfig({
        ADMIN_TOKEN_FILE: file("admin", "t".repeat(30) + "\n"),
        DATA_ENCRYPTION_KEY_FILE: file("data", "d".repeat(40) + "\r\n"),
        RPC_URL_84532: "http://a",
        RELAYER_PRIVATE_KEY_84532_FILE: file("relayer", key + "\n"),
      });
      expect(config.ADMIN_TOKEN).to.equal("t".repeat(30));
      expect(config.DATA_ENCRYPTION_KEY).to.equal("d".repeat(40));
      expect(config.relayerKeys.get(84532)).to.equal(key);
      expect(refusal({ ...SECRETS, ADMIN_TOKEN_FILE: file("a2", "x".repeat(30)) })).to.include(
        "ADMIN_TOKEN_FILE: ADMIN_TOKEN is set too",
      );
      expect(
        refusal({ DATA_ENCRYPTION_KEY: SECRETS.DATA_ENCRYPTION_KEY, ADMIN_TOKEN_FILE: path.join(dir, "missing") }),
      ).to.include(`ADMIN_TOKEN_FILE: cannot read ${path.join(dir, "missing")} (ENOENT)`);
      expect(
        refusal({ DATA_ENCRYPTION_KEY: SECRETS.DATA_ENCRYPTION_KEY, ADMIN_TOKEN_FILE: file("empty", "\n") }),
      ).to.include("ADMIN_TOKEN_FILE: ");
      const short = refusal({
        DATA_ENCRYPTION_KEY: SECRETS.DATA_ENCRYPTION_KEY,
        ADMIN_TOKEN_FILE: file("short", "tooshort-secret"),
      });
      expect(short).to.include("ADMIN_TOKEN: must be at least 24 characters").and.not.include("tooshort-secret");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("outside the local sandbox the embedded database refuses a data key file inside its own data directory (one backup would hold both); elsewhere, with PostgreSQL or in the sandbox, it is taken", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-key-placement-"));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "tak-key-outside-"));
    try {
      const keyFile = (dir: string) => {
        const at = path.join(dir, "data-encryption-key");
        fs.writeFileSync(at, "k".repeat(40), { mode: 0o600 });
        return at;
      };
      const inside = keyFile(path.join(dataDir));
      fs.mkdirSync(path.join(dataDir, "production"), { recursive: true });
      const deeper = keyFile(path.join(dataDir, "production"));
      const linked = path.join(outside, "link-to-inside");
      fs.symlinkSync(inside, linked);
      const base = { ADMIN_TOKEN: SECRETS.ADMIN_TOKEN, DATA_DIR: dataDir };
      for (const file of [inside, deeper, linked]) {
        expect(refusal({ ...base, DATA_ENCRYPTION_KEY_FILE: file }), file).to.include(
          `DATA_ENCRYPTION_KEY_FILE: ${file} is inside DATA_DIR (${dataDir}), beside the embedded database`,
        );
      }
      expect(loadConfig({ ...base, DATA_ENCRYPTION_KEY_FILE: keyFile(outside) }).DATA_ENCRYPTION_KEY).to.equal(
        "k".repeat(40),
      );
      expect(
        loadConfig({ ...base, DATA_ENCRYPTION_KEY_FILE: inside, DATABASE_URL: "postgres://db.example/tak" })
          .DATA_ENCRYPTION_KEY,
      ).to.equal("k".repeat(40));
      expect(
        loadConfig({ ...base, DATA_ENCRYPTION_KEY_FILE: inside }, { profile: "local" }).DATA_ENCRYPTION_KEY,
      ).to.equal("k".repeat(40));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it("TRUST_PROXY takes Express's forms: false, a hop count, addresses and ranges", () => {
    expect(loadConfig(SECRETS).trustProxy).to.deep.equal(["loopback"]);
    expect(loadConfig({ ...SECRETS, TRUST_PROXY: "false" }).trustProxy).to.equal(false);
    expect(loadConfig({ ...SECRETS, TRUST_PROXY: "2" }).trustProxy).to.equal(2);
    expect(loadConfig({ ...SECRETS, TRUST_PROXY: "10.0.0.0/8, 2001:db8::/32,loopback" }).trustProxy).to.deep.equal([
      "10.0.0.0/8",
      "2001:db8::/32",
      "loopback",
    ]);
  });

  it("the env file: ENV_FILE or ./.env, the environment winning; ENV_FILE naming no file is an error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-env-file-"));
    try {
      expect(withEnvFile({ A: "1" }, dir)).to.deep.equal({ env: { A: "1" } });
      fs.writeFileSync(
        path.join(dir, ".env"),
        '# comment\nPORT=4000\nHOST=0.0.0.0\nADMIN_TOKEN="quoted value of the token"\n',
      );
      const { env, file } = withEnvFile({ PORT: "5000" }, dir);
      expect(file).to.equal(path.join(dir, ".env"));
      expect(env).to.include({ PORT: "5000", HOST: "0.0.0.0", ADMIN_TOKEN: "quoted value of the token" });
      expect(() => withEnvFile({ ENV_FILE: "nope.env" }, dir)).to.throw(
        `ENV_FILE: cannot read ${path.join(dir, "nope.env")} (ENOENT)`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
