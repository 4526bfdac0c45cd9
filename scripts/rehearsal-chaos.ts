import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { failures, reportScenario, reportTable, type ScenarioReport } from "../test/chaos/report";
import { SCENARIOS } from "../test/chaos/scenarios";
import { MiningControl, directProvider, type ChaosWorld } from "../test/chaos/world";
import { RpcFaultProxy } from "../test/helpers/rpc-faults";
import { ApiClient } from "../test/helpers/service";
import { createRehearsal, type Rehearsal } from "./lib/rehearsal";
import type { ServiceProcess } from "./lib/service-process";

/**
 * `npm run rehearsal:chaos`: every chaos scenario (test/chaos/scenarios.ts) on the rehearsal network, with blocks at
 * their public intervals (Base Sepolia every 2 s; REHEARSAL_BLOCK_TIME_84532 overrides), the service as its own process
 * with its production defaults (confirmations per chain: 2 on Base Sepolia) talking to Base Sepolia through the fault
 * proxy. Prints the per-scenario table, writes it to test-artifacts/chaos-rehearsal.json (CHAOS_REPORT overrides) and
 * exits 1 when a figure that must be 0 is not. CHAOS_SCENARIOS=name,name runs some.
 */
async function main() {
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-rehearsal-chaos-"));
  let rehearsal: Rehearsal | undefined;
  let proxy: RpcFaultProxy | undefined;
  let service: ServiceProcess | undefined;
  const reports: ScenarioReport[] = [];
  try {
    rehearsal = await createRehearsal(hre, {
      deploymentsDir: path.join(dataDir, "deployments"),
      dataDir,
      log: (line) => console.log(line),
    });
    const base = rehearsal.baseSepolia;
    proxy = await RpcFaultProxy.start(base.url, 84532);
    service = await rehearsal.startService({ RPC_URL_84532: proxy.url, RPC_TIMEOUT_MS: "2000", SEND_WAIT_MS: "3000" });
    const { apiKey } = await rehearsal.onboard(service);
    const world: ChaosWorld = {
      api: new ApiClient(service.url),
      apiKey,
      base: {
        chainId: 84532,
        chain: base,
        proxy,
        provider: directProvider(base),
        mining: new MiningControl(base, {
          set: (wei) => base.setMinBaseFee(wei),
          normal: base.network.minBaseFeePerGas,
        }),
        deployment: rehearsal.deployments[84532],
      },
      faucet: { provider: directProvider(rehearsal.sepolia), bkn: rehearsal.deployments[11155111].contracts.BKN },
      signers: [rehearsal.accounts[2], rehearsal.accounts[5]],
      payer: rehearsal.accounts[3],
      agentWallet: rehearsal.accounts[4].address,
      confirmations: 2,
      blockTime: base.blockTime,
      opDeadlineMs: 180_000,
    };
    const only = process.env.CHAOS_SCENARIOS?.split(",").map((s) => s.trim());
    console.log(
      `rehearsal up in ${Math.round((Date.now() - started) / 1000)} s; Base Sepolia mines every ${base.blockTime} s`,
    );
    for (const scenario of SCENARIOS.filter((s) => !only || only.includes(s.name))) {
      const at = Date.now();
      const fromBlock = await world.base.provider.getBlockNumber();
      const ops = await scenario.run(world);
      const report = await reportScenario(world, scenario.name, fromBlock, ops);
      reports.push(report);
      console.log(
        `${scenario.name}: ${report.terminal}/${report.operations} terminal in ${Math.round((Date.now() - at) / 1000)} s${failures(report).length ? ` — ${failures(report).join(", ")}` : ""}`,
      );
      for (const note of report.notes) console.log(`  ${note}`);
    }
    world.base.provider.destroy();
    world.faucet.provider.destroy();
  } finally {
    await service?.stop();
    await proxy?.close();
    await rehearsal?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\n${reportTable(reports)}\n`);
  const file = process.env.CHAOS_REPORT ?? path.join("test-artifacts", "chaos-rehearsal.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    JSON.stringify(
      { ranAt: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000), reports },
      null,
      2,
    ),
  );
  const failed = reports
    .flatMap(failures)
    .concat(
      reports
        .filter((r) => r.terminal !== r.operations)
        .map((r) => `${r.scenario}: ${r.operations - r.terminal} not terminal`),
    );
  if (failed.length) {
    console.error(`FAIL\n${failed.join("\n")}`);
    process.exitCode = 1;
  } else
    console.log(
      `PASS: every scenario, every figure that must be 0 is 0 (${Math.round((Date.now() - started) / 1000)} s)`,
    );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
