import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { runAdminCommand } from "../../service/operator/commands";
import type { Services } from "../../service/composition";
import { ARTIFACTS } from "./browser";
import { ApiClient, type ApiResponse } from "./service";

const ROOT = path.resolve(__dirname, "../..");

/** `npm run admin -- operators add …` as the running service runs it (POST /admin/command): the operator and its link. */
export async function addOperator(
  services: Services,
  email: string,
  role: "viewer" | "reviewer" | "admin",
  password?: string,
): Promise<{ email: string; signInLink?: { url: string; expiresAt: string } }> {
  const console = { baseUrl: services.baseUrl, linkTtlMs: services.config.CONSOLE_SIGN_IN_LINK_TTL };
  return (await runAdminCommand(
    services,
    { command: "operators.add", email, role, ...(password ? { password } : {}) },
    { operations: [], console },
  )) as any;
}

/** The console's JSON API as a signed-in browser calls it: the session cookie, and the CSRF token on changes. */
export class ConsoleClient {
  private cookie?: string;
  csrfToken?: string;

  constructor(readonly baseUrl: string) {}

  private get api() {
    return new ApiClient(this.baseUrl);
  }

  async signIn(credentials: { email: string; password: string } | { token: string }): Promise<ApiResponse> {
    const res = await this.api.post("/console/api/session", credentials);
    if (res.status === 200) {
      this.cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
      this.csrfToken = res.body.csrfToken;
    }
    return res;
  }

  get setCookie(): string | undefined {
    return this.cookie;
  }

  /** A request with the session's cookie; `csrf: false` leaves the CSRF token out of a change. */
  request(
    method: string,
    pathAndQuery: string,
    body?: unknown,
    options: { csrf?: boolean; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = {
      ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(options.headers ?? {}),
    };
    if (method !== "GET" && options.csrf !== false && this.csrfToken) headers["x-csrf-token"] = this.csrfToken;
    return this.api.request(method, pathAndQuery, body, headers);
  }

  get(pathAndQuery: string) {
    return this.request("GET", pathAndQuery);
  }

  post(pathAndQuery: string, body: unknown = {}, options: { csrf?: boolean; headers?: Record<string, string> } = {}) {
    return this.request("POST", pathAndQuery, body, options);
  }
}

/** Signs in through the sign-in page with the keyboard alone: Tab to each field, type, Enter. */
export async function signInWithKeyboard(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement && document.activeElement.id")).to.equal("email");
  await page.keyboard.type(email);
  await page.keyboard.press("Tab");
  await page.keyboard.type(password);
  await Promise.all([page.waitForURL(`${baseUrl}/console`), page.keyboard.press("Enter")]);
}

const AXE_SOURCE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/**
 * The page's accessibility violations that axe-core rates serious or critical (none is allowed), its script run
 * through the DevTools protocol (the page's own CSP allows no inline script, and must not be loosened to test it).
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page (this file is compiled without the DOM's types).
  const results = await page.evaluate<
    { id: string; impact: string; help: string; targets: string[] }[]
  >(`axe.run(document, { resultTypes: ["violations"] }).then((run) =>
    run.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) })))`);
  return results
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(", ")}`);
}

/**
 * A screenshot of a console page for the operating guide: under test-artifacts/, and, with CONSOLE_SCREENSHOTS=docs,
 * also in docs/ (where docs/operating.md shows them).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  if (process.env.CONSOLE_SCREENSHOTS === "docs")
    await page.screenshot({ path: path.join(ROOT, "docs", `${name}.png`), fullPage: false });
}
