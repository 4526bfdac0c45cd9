import hre from "hardhat";
import { writeBenchResult } from "./reads";
import { measureVolume } from "./volume";

/**
 * `npx hardhat run bench/run-volume.ts`: relayed (x402-paid) and client-signed throughput, relayer nonce contiguity
 * and service memory. BENCH_VOLUME_SECONDS shortens the relayed runs (default 60), BENCH_SKIP_POSTGRES=1 skips the
 * two-instance run on the PostgreSQL server (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
async function main() {
  const result = await measureVolume(hre, {
    seconds: Number(process.env.BENCH_VOLUME_SECONDS ?? 60),
    clientSignedSeconds: Number(process.env.BENCH_CLIENT_SIGNED_SECONDS ?? 15),
    skipPostgres: process.env.BENCH_SKIP_POSTGRES === "1",
  });
  console.log("");
  for (const r of result.relayed) {
    console.log(`${r.run}: ${r.txPerSec} tx/s, p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, nonces ${r.relayer.contiguous ? "contiguous" : "NOT contiguous"} ${r.pass ? "PASS" : "FAIL"} (target ${r.target})`);
  }
  const one = result.singleClient;
  console.log(`1 client alone: ${one.txPerSec} tx/s, p50 ${one.p50Ms} ms (prepare ${one.prepareP50Ms} ms, send ${one.sendP50Ms} ms)`);
  for (const note of result.notes) console.log(`bound: ${note}`);
  const c = result.clientSigned;
  console.log(`client-signed ${c.service.txPerSec} tx/s vs raw ${c.raw.txPerSec} tx/s (${c.ratio}×)`);
  const m = result.memory;
  console.log(`service RSS idle ${m.idleMiB} MiB, after run 1 ${m.afterFirstRunMiB} MiB, after run 2 ${m.afterSecondRunMiB} MiB (growth ${m.growthMiB} MiB)`);
  writeBenchResult("volume.json", result);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
