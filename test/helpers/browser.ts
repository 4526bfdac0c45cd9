import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Chromium from Debian (`apt-get install -y chromium`); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where browser tests save their screenshots (not committed). */
export const ARTIFACTS = path.resolve(__dirname, "../../test-artifacts");

/**
 * Headless Chromium through playwright-core, as the browser tests drive it (no sandbox: tests may run as root in a
 * container; no background traffic, so a test can assert that a page reaches nothing but the service).
 */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`The browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`);
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
