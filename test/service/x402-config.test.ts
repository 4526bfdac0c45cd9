import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService } from "../helpers/service";

/**
 * The payment chain follows the environment (Base Sepolia in the sandbox, Base in production) unless configured, and
 * the service refuses to start with a configuration that cannot take the payments it would advertise.
 */
describe("x402 configuration at start", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await getSandbox();
  });

  const refusal = async (env: Record<string, string>): Promise<string> => {
    try {
      const service = await startTestService(sandbox, { env });
      await service.stop();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`the service started with ${JSON.stringify(env)}`);
  };

  it("the sandbox takes payments on Base Sepolia by default, in the chain's USDC with its own EIP-712 name and version", async () => {
    const service = await startTestService(sandbox);
    try {
      expect(service.services.x402!.network).to.equal("eip155:84532");
      expect(service.services.x402!.asset).to.equal(sandbox.deployments[84532].contracts.USDC);
      const quote = service.services.x402!.requirements({
        subject: "x",
        routeKey: "POST /x",
        amount: 1n,
        resourceUrl: "http://x",
        description: "x",
      });
      expect(quote.extra).to.include({ name: "USDC", version: "2" });
    } finally {
      await service.stop();
    }
  });

  it("production defaults to Base (8453): without it served, the service refuses to start unless x402 is off", async () => {
    expect(await refusal({ ENVIRONMENT: "production" })).to.match(
      /x402 takes payments on chain 8453, which this production deployment does not serve/,
    );
    const off = await startTestService(sandbox, { env: { ENVIRONMENT: "production", X402_ENABLED: "false" } });
    expect(off.services.x402).to.equal(undefined);
    await off.stop();
  });

  it("a payment chain that is not served, or a payment asset without EIP-3009, stops the start with the reason", async () => {
    expect(await refusal({ X402_PAYMENT_CHAIN_ID: "8453" })).to.match(
      /chain 8453, which this sandbox deployment does not serve/,
    );
    // A deployment whose "USDC" is the chain's USDT (no EIP-3009).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-no3009-"));
    for (const file of fs.readdirSync(sandbox.deploymentsDir))
      if (file.endsWith(".json")) fs.copyFileSync(path.join(sandbox.deploymentsDir, file), path.join(dir, file));
    const base = JSON.parse(fs.readFileSync(path.join(dir, "84532.json"), "utf8"));
    fs.writeFileSync(
      path.join(dir, "84532.json"),
      JSON.stringify({ ...base, contracts: { ...base.contracts, USDC: base.contracts.USDT } }, null, 2),
    );
    try {
      expect(await refusal({ DEPLOYMENTS_DIR: dir })).to.match(/does not implement EIP-3009/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a configured payment chain is used: Sepolia's USDC", async () => {
    const service = await startTestService(sandbox, { env: { X402_PAYMENT_CHAIN_ID: "11155111" } });
    try {
      expect(service.services.x402!.network).to.equal("eip155:11155111");
      expect(service.services.x402!.asset).to.equal(sandbox.deployments[11155111].contracts.USDC);
    } finally {
      await service.stop();
    }
  });
});

describe("a production deployment serves Sepolia for RAMS only (RAMS runs on Sepolia in both environments)", function () {
  this.timeout(120_000);
  it("a RAMS prepare on 11155111 is planned; a tokenization there is refused naming the rule; Base Sepolia is not served", async () => {
    const sandbox = await getSandbox();
    const production = await startTestService(sandbox, { env: { ENVIRONMENT: "production", X402_ENABLED: "false" } });
    try {
      const { key } = await production.services.apiKeys.create({ email: "ops@production.test", plan: "Enterprise" });
      const complianceOwner = sandbox.accounts[6];
      await production.services.signers.add(complianceOwner.address, "all-keys");
      const api = production.api.withKey(key);
      const rams = await api.post("/prepare-transactions", {
        method: "ramsGrantPrincipal",
        chainId: "11155111",
        signerAddress: complianceOwner.address,
        principal: sandbox.accounts[5].address,
        identityRef: "0x" + "42".repeat(32),
      });
      expect(rams.status, JSON.stringify(rams.body)).to.equal(200);
      const tokenization = await api.post("/prepare-transactions", {
        method: "newTokenization",
        chainId: "11155111",
        signerAddress: complianceOwner.address,
        tokenizerEmail: "x@production.test",
        name: "X",
        tokenSymbol: "XPROD",
      });
      expect(tokenization.status).to.equal(400);
      expect(tokenization.body.message).to.equal(
        "chain 11155111 serves only rams on the production deployment, not newTokenization",
      );
      const base = await api.get("/get-network-info", { chainId: "84532" });
      expect(base.status).to.equal(400);
      expect(base.body.message).to.match(/is not available on the production deployment/);
    } finally {
      await production.stop();
    }
  });
});
