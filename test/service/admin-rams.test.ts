// tier: e2e
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { id as keccakId, Interface, MaxUint256, type Wallet } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import {
  AgentExecutor__factory,
  AgentMandate__factory,
  ComplianceProvider__factory,
  USDC__factory,
} from "../../typechain-types";
import { cliError, cliJson, runAdminCli } from "../helpers/admin-cli";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * `npm run admin -- rams setup-executor` against the sandbox's Sepolia chain while a service runs on the embedded
 * database: the chain steps run in the CLI with the keys of its environment; the executor is recorded through the
 * running service as the principal's default.
 */
describe("operator CLI: rams setup-executor", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let dataDir: string;
  let principal: Wallet;
  const identityRef = keccakId("kyc:admin-cli-principal");

  const admin = (env: Record<string, string>, ...args: string[]) =>
    runAdminCli(dataDir, args, {
      RPC_URL_11155111: sandbox.sepolia.url,
      DEPLOYMENTS_DIR: sandbox.deploymentsDir,
      ...env,
    });
  const json = cliJson;
  const errorOf = cliError;
  const keys = () => sandbox.accounts.slice(0, 20).map((a) => a.privateKey.slice(2));

  before(async () => {
    sandbox = await getSandbox();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-rams-"));
    service = await startTestService(sandbox, { dataDir });
    principal = sandbox.accounts[11];
  });
  after(async () => {
    await service?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("with only the admin's key: performs deploy, recorder role and selectors; prints the principal's approval and the grant-principal as prepared transactions; records the default executor through the service", async () => {
    const usdc = sandbox.deployments[11155111].contracts.USDC;
    const enforcer = sandbox.accounts[RAMS_ENFORCER_INDEX].address;
    const result = await admin(
      { RAMS_ADMIN_PRIVATE_KEY: sandbox.accounts[0].privateKey },
      "rams",
      "setup-executor",
      "--principal",
      principal.address,
      "--selector",
      "transferFrom",
      "--selector",
      "0x095ea7b3:none",
      "--asset",
      usdc,
      "--enforcer",
      enforcer,
      "--identity-ref",
      identityRef,
    );
    const out = json(result);
    for (const secret of keys()) expect(result.stdout + result.stderr).to.not.include(secret);
    expect(out.steps.map((s: any) => [s.step, s.name, s.status])).to.deep.equal([
      [1, "deploy-executor", "done"],
      [2, "grant-recorder-role", "done"],
      [3, "set-action", "done"],
      [3, "set-action", "done"],
      [4, "principal-approval", "prepared"],
      [5, "enforcer", "already"],
      [6, "grant-principal", "prepared"],
    ]);
    expect(out.steps[2]).to.include({
      selector: "0x23b872dd",
      selectorName: "transferFrom",
      hasAmount: true,
      amountIndex: 2,
    });
    expect(out.steps[3]).to.include({ selector: "0x095ea7b3", hasAmount: false });
    expect(out.steps[3].warning).to.match(/bypasses the mandate's caps/);
    const approval = out.steps[4].transaction;
    expect(approval).to.include({ from: principal.address, to: usdc, chainId: 11155111, value: "0x00" });
    expect(
      new Interface(["function approve(address,uint256)"]).decodeFunctionData("approve", approval.data).map(String),
    ).to.deep.equal([out.executor, MaxUint256.toString()]);
    const complianceOwner = sandbox.accounts[RAMS_COMPLIANCE_OWNER_INDEX].address;
    expect(out.steps[6].transaction.from).to.equal(complianceOwner);
    expect(out.steps[6].api).to.deep.include({ method: "ramsGrantPrincipal" });
    expect(out.pending).to.have.length(2);
    expect(out.complete).to.equal(false);
    expect(out.recorded).to.include({
      executor: out.executor,
      principal: principal.address,
      owner: sandbox.accounts[0].address,
    });

    const provider = providerFor(sandbox.sepolia);
    const executor = AgentExecutor__factory.connect(out.executor, provider);
    const registry = AgentMandate__factory.connect(sandbox.deployments[11155111].contracts.AgentMandate, provider);
    expect(await executor.principal()).to.equal(principal.address);
    expect(await registry.hasRole(await registry.RECORDER_ROLE(), out.executor)).to.equal(true);
    const spec = await executor.actions("0x23b872dd");
    expect([spec.supported, spec.hasAmount, spec.amountIndex]).to.deep.equal([true, true, 2n]);
    expect((await service.services.ramsExecutors.defaultFor(11155111, principal.address))?.executor).to.equal(
      out.executor,
    );

    // The running service now resolves the principal's executor without executorAddress.
    const { key } = await service.services.apiKeys.create({ email: "ops@rams-cli.test", plan: "Starter" });
    const read = await service.api
      .withKey(key)
      .get("/rams/executor-action", { chainId: "aa36a7", principal: principal.address, selector: "0x23b872dd" });
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    expect(read.body.data).to.include({
      executorAddress: out.executor,
      owner: sandbox.accounts[0].address,
      principal: principal.address,
      hasAmount: true,
      amountIndex: 2,
    });
    provider.destroy();
  });

  it("run again with the principal's and the compliance owner's keys: what is in place is left alone, the rest is performed", async () => {
    const [first] = await service.services.ramsExecutors
      .list(11155111)
      .then((all) => all.filter((r) => r.principal === principal.address));
    const out = json(
      await admin(
        {
          RAMS_ADMIN_PRIVATE_KEY: sandbox.accounts[0].privateKey,
          RAMS_PRINCIPAL_PRIVATE_KEY: principal.privateKey,
          RAMS_COMPLIANCE_PRIVATE_KEY: sandbox.accounts[RAMS_COMPLIANCE_OWNER_INDEX].privateKey,
        },
        "rams",
        "setup-executor",
        "--principal",
        principal.address,
        "--executor",
        first.executor,
        "--selector",
        "transferFrom:2",
        "--asset",
        sandbox.deployments[11155111].contracts.USDC,
        "--allowance",
        "5000000",
        "--enforcer",
        sandbox.accounts[RAMS_ENFORCER_INDEX].address,
        "--identity-ref",
        identityRef,
      ),
    );
    // deploy, recorder role, selector and enforcer were in place; the approval and the grant-principal were performed.
    expect(out.steps.map((s: any) => s.status)).to.deep.equal([
      "already",
      "already",
      "already",
      "done",
      "already",
      "done",
    ]);
    expect(out.complete).to.equal(true);
    expect(out.pending).to.deep.equal([]);
    const provider = providerFor(sandbox.sepolia);
    const usdc = USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, provider);
    expect(await usdc.allowance(principal.address, first.executor)).to.equal(5_000_000n);
    const compliance = ComplianceProvider__factory.connect(
      sandbox.deployments[11155111].contracts.ComplianceProvider,
      provider,
    );
    expect((await compliance.checkPrincipal(principal.address, identityRef))[0]).to.equal(true);
    provider.destroy();
    const listed = json(await admin({}, "rams", "executors", "--chain-id", "11155111"));
    expect(listed.map((r: any) => r.executor)).to.include(first.executor);
  });

  it("refuses: no admin key, a bad selector, the admin as enforcer, a key that is not the principal's (exit 1, JSON error, no key printed)", async () => {
    const base = ["rams", "setup-executor", "--principal", principal.address, "--selector", "transferFrom"];
    expect(errorOf(await admin({}, ...base))).to.match(/RAMS_ADMIN_PRIVATE_KEY is required/);
    const adminKey = { RAMS_ADMIN_PRIVATE_KEY: sandbox.accounts[0].privateKey };
    const badSelector = await admin(
      adminKey,
      "rams",
      "setup-executor",
      "--principal",
      principal.address,
      "--selector",
      "0x1234:2",
    );
    expect(badSelector.code).to.equal(1);
    expect(errorOf(badSelector)).to.match(/--selector 0x1234:2/);
    const noIndex = await admin(
      adminKey,
      "rams",
      "setup-executor",
      "--principal",
      principal.address,
      "--selector",
      "0xdeadbeef",
    );
    expect(errorOf(noIndex)).to.match(/amount's argument index/);
    const [record] = (await service.services.ramsExecutors.list(11155111)).filter(
      (r) => r.principal === principal.address,
    );
    const overlap = await admin(
      adminKey,
      ...base,
      "--executor",
      record.executor,
      "--enforcer",
      sandbox.accounts[0].address,
    );
    expect(overlap.code).to.equal(1);
    expect(errorOf(overlap)).to.match(/AdminEnforcerOverlap/);
    const wrongKey = await admin(
      { ...adminKey, RAMS_PRINCIPAL_PRIVATE_KEY: sandbox.accounts[12].privateKey },
      ...base,
      "--executor",
      record.executor,
      "--asset",
      sandbox.deployments[11155111].contracts.USDT,
    );
    expect(wrongKey.code).to.equal(1);
    expect(errorOf(wrongKey)).to.match(/RAMS_PRINCIPAL_PRIVATE_KEY is the key of/);
    for (const r of [overlap, wrongKey])
      for (const secret of keys()) expect(r.stdout + r.stderr).to.not.include(secret);
    const usage = await admin(adminKey, "rams", "setup-executor", "--selector", "transferFrom");
    expect(usage.code).to.equal(2);
    expect(errorOf(usage)).to.match(/--principal is required/);
    // USDC balance untouched by refusals: nothing was approved with the wrong key.
    const usdt = USDC__factory.connect(sandbox.deployments[11155111].contracts.USDT, providerFor(sandbox.sepolia));
    expect(await usdt.allowance(principal.address, record.executor)).to.equal(0n);
  });
});
