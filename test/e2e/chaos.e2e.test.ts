import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { SCENARIOS } from "../chaos/scenarios";
import { failures, reportScenario, reportTable, type ScenarioReport } from "../chaos/report";
import { MiningControl, directProvider, type ChaosWorld } from "../chaos/world";
import { RpcFaultProxy } from "../helpers/rpc-faults";
import { ARTIFACTS } from "../helpers/browser";
import { createOwnSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * The chaos suite on instant chains: every fault of a public network between the service and the payment chain (Base
 * Sepolia, where paid relayed operations and their x402 settlements run), with paid relayed and client-signed
 * operations side by side. Per scenario: operations, terminal, stuck, sent twice, charged twice, charged without the
 * operation, unpaid, wrong status, 5xx — every figure but the first two must be 0. `npm run rehearsal:chaos` runs the
 * same scenarios on the rehearsal network, with blocks at their public intervals.
 */
describe("e2e: chaos — faults of public networks between the service and its chain", function () {
  this.timeout(600_000);
  let sandbox: Sandbox;
  let proxy: RpcFaultProxy;
  let service: TestService;
  let world: ChaosWorld;
  const reports: ScenarioReport[] = [];

  before(async () => {
    sandbox = await createOwnSandbox();
    proxy = await RpcFaultProxy.start(sandbox.baseSepolia.url, 8_4532);
    service = await startTestService(sandbox, {
      env: {
        RPC_URL_84532: proxy.url,
        RPC_TIMEOUT_MS: "1000",
        RPC_RETRY_BUDGET_MS: "15000",
        CONFIRMATIONS: "2",
        RELAYER_BUMP_AFTER_BLOCKS: "2",
        SEND_WAIT_MS: "1500",
        REORG_WATCH_BLOCKS: "64",
      },
    });
    const { key } = await service.services.apiKeys.create({ email: "chaos@example.com", plan: "Enterprise" });
    const [payer, agent] = [sandbox.accounts[3], sandbox.accounts[4]];
    const signers = sandbox.accounts.slice(10, 14);
    for (const signer of signers) await service.services.signers.add(signer.address);
    world = {
      api: service.api,
      apiKey: key,
      base: {
        chainId: 84532,
        chain: sandbox.baseSepolia,
        proxy,
        provider: directProvider(sandbox.baseSepolia),
        mining: new MiningControl(sandbox.baseSepolia),
        deployment: sandbox.deployments[84532],
      },
      signers,
      payer,
      agentWallet: agent.address,
      confirmations: 2,
      blockTime: 0,
      opDeadlineMs: 90_000,
    };
  });

  after(async () => {
    if (reports.length) {
      const table = reportTable(reports);
      console.log(`\n${table}\n`);
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      fs.writeFileSync(path.join(ARTIFACTS, "chaos-instant.json"), JSON.stringify(reports, null, 2));
    }
    world?.base.provider.destroy();
    await service?.stop();
    await proxy?.close();
    await sandbox?.close();
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: ${scenario.description}`, async () => {
      const fromBlock = await world.base.provider.getBlockNumber();
      const ops = await scenario.run(world);
      const report = await reportScenario(world, scenario.name, fromBlock, ops);
      reports.push(report);
      expect(failures(report), JSON.stringify(report, null, 2)).to.deep.equal([]);
      expect(report.terminal, JSON.stringify(report, null, 2)).to.equal(report.operations);
    });
  }
});
