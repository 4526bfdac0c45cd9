import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** How many times a part that reports runs measures (BENCH_RUNS, default 3: the figures the issues ask for). */
export const benchRuns = () => Math.max(1, Number(process.env.BENCH_RUNS ?? 3));

/** The 1-minute load average, to one decimal (what each bench table prints beside its figures). */
export const loadNow = () => Math.round(os.loadavg()[0] * 10) / 10;

/**
 * Runs `measure` BENCH_RUNS times in a row and writes bench/results/<name>-runs-latest.md: one table, each run's rows
 * under the 1-minute load average at its start and end, with the command that reproduces it. Returns every run's result.
 */
export async function inRuns<T>(
  name: string,
  title: string,
  command: string,
  header: string[],
  measure: (run: number) => Promise<T>,
  rowsOf: (result: T) => (string | number)[][],
  notes: (results: T[]) => string[] = () => [],
): Promise<T[]> {
  const results: T[] = [];
  const lines: string[] = [];
  for (let run = 1; run <= benchRuns(); run++) {
    const loadBefore = loadNow();
    const result = await measure(run);
    results.push(result);
    rowsOf(result).forEach((cells, i) =>
      lines.push(`| ${i === 0 ? `${run} (${loadBefore} → ${loadNow()})` : ""} | ${cells.join(" | ")} |`),
    );
  }
  const out = path.join(__dirname, "results", `${name}-runs-latest.md`);
  fs.writeFileSync(
    out,
    [
      `# ${title}`,
      "",
      `Written by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (${os.cpus().length} cores; load average over 1 minute at the start and the end of each run).`,
      "",
      `| run (load) | ${header.join(" | ")} |`,
      `|---|${header.map(() => "---").join("|")}|`,
      ...lines,
      ...notes(results).flatMap((n) => ["", n]),
      "",
    ].join("\n"),
  );
  console.log(`written ${path.relative(process.cwd(), out)}`);
  return results;
}
