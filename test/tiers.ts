import fs from "node:fs";
import path from "node:path";

/**
 * The test tiers. `npm test` (the README's command) runs `fast`; each other tier has its own `npm run test:<tier>`,
 * `npm run test:tiers` runs them all after it in `.ci/run`, and `npm run test:all` runs `npm test` and then them.
 * A file belongs to `fast` unless its first line names another tier (`// tier: release`) or it sits in test/postgres/.
 */
export const TIERS = {
  fast: "unit tests against in-memory fakes, the contract suite, in-process integration tests",
  e2e: "services in child processes, restarts and crashes, SoftHSM, long in-process journeys",
  browser: "the console, the KYC pages and the docs page in headless Chromium",
  release: "the production build, a fresh install, npm start, the demo, the README's and guides' snippets",
  chaos: "faults of public networks injected between the service and its chains, the rehearsal network",
  pg: "the stores and the engine on a PostgreSQL server (TEST_DATABASE_URL)",
} as const;

export type Tier = keyof typeof TIERS;

const HEADER = /^\/\/ tier: ([a-z0-9-]+)/;

const isTier = (name: string): name is Tier => Object.hasOwn(TIERS, name);

/** The tier a test file belongs to; a header naming no tier is an error, not a file silently left out. */
export function tierOf(file: string): Tier {
  if (file.split(path.sep).join("/").includes("/test/postgres/")) return "pg";
  const firstLine = fs.readFileSync(file, "utf8").split("\n", 1)[0];
  const named = HEADER.exec(firstLine)?.[1];
  if (named === undefined) return "fast";
  if (!isTier(named)) throw new Error(`${file}: "// tier: ${named}" names no tier (${Object.keys(TIERS).join(", ")})`);
  return named;
}

/** The tiers `hardhat test` runs when it is given no files: TEST_TIER (one, or several separated by commas), or `fast`. */
export function selectedTiers(env: NodeJS.ProcessEnv = process.env): Tier[] {
  const names = (env.TEST_TIER ?? "fast").split(",").map((name) => name.trim());
  for (const name of names)
    if (!isTier(name))
      throw new Error(`TEST_TIER must name tiers among ${Object.keys(TIERS).join(", ")}, not "${name}"`);
  return names as Tier[];
}

/**
 * The files longest first, by test/file-times.json (`npm run test:file-times`); files it does not know yet go last.
 * Mocha's workers take files in order, so the long ones start early and the workers finish together.
 */
export function longestFirst(files: string[], root: string): string[] {
  const timesFile = path.join(root, "test", "file-times.json");
  const times: Record<string, number> = fs.existsSync(timesFile) ? JSON.parse(fs.readFileSync(timesFile, "utf8")) : {};
  const seconds = (file: string) => times[path.relative(root, file).split(path.sep).join("/")] ?? 0;
  return [...files].sort((a, b) => seconds(b) - seconds(a));
}
