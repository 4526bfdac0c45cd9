import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../../service/config";
import { createLogger, type Logger } from "../../service/logger";
import { startService, type RunningService } from "../../service/server";
import { openDb, type Db } from "../../service/store/db";
import type { ApiClient as TypedClient } from "../../client/index";
import { documentedClient } from "./client";
import { checkDocumented } from "./documented";
import { RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "./sandbox";

export interface TestService extends RunningService {
  config: Config;
  api: ApiClient;
  dataDir: string;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  db?: Db;
  /** Keep the data directory (restart tests). */
  dataDir?: string;
  /** Where the service logs (default: a logger at TEST_LOG_LEVEL, silent unless set). */
  logger?: Logger;
  /** The embedded database on disk under the data directory, as the service opens it itself (default: in memory). */
  onDisk?: boolean;
}

/** The environment a test service runs with: the sandbox chains, an ephemeral port, a private data directory. */
export function testEnv(sandbox: Sandbox, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ENVIRONMENT: "sandbox",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    DEPLOYMENTS_DIR: sandbox.deploymentsDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    [`RPC_URL_${sandbox.sepolia.chainId}`]: sandbox.sepolia.url,
    [`RPC_URL_${sandbox.baseSepolia.chainId}`]: sandbox.baseSepolia.url,
    RELAYER_PRIVATE_KEY: sandbox.accounts[RELAYER_INDEX].privateKey,
    X402_SETTLEMENT_PRIVATE_KEY: sandbox.accounts[SETTLEMENT_INDEX].privateKey,
    SEND_WAIT_MS: "20000",
    // The sandbox chains carry the public ids but never reorg: one block is final (chaos tests set more).
    CONFIRMATIONS: "1",
    // One key for every test service: tests that share a database between services (another data directory each)
    // must open each other's sealed values, as instances of one deployment do.
    DATA_ENCRYPTION_KEY: "test-data-encryption-key-shared-by-every-test-service",
    // Base Sepolia is a sandbox network: a production deployment here serves Sepolia (for RAMS) only.
    ...(extra.ENVIRONMENT === "production" ? { [`RPC_URL_${sandbox.baseSepolia.chainId}`]: "" } : {}),
    ...extra,
  };
}

/**
 * Starts the real service in this process on an ephemeral port, on an in-memory PGlite unless a Db is given, with the
 * local sandbox's posture (config.ts Profile).
 */
export async function startTestService(sandbox: Sandbox, options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "tak-data-"));
  const config = loadConfig(testEnv(sandbox, dataDir, options.env), { profile: "local" });
  const db = options.db ?? (config.DATABASE_URL || options.onDisk ? undefined : await openDb({}));
  let running: RunningService;
  try {
    running = await startService(config, { db, logger: options.logger ?? createLogger(config.LOG_LEVEL) });
  } catch (error) {
    if (!options.db && db) await db.close();
    if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    await running.stop();
    if (!options.db && db) await db.close();
    if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { ...running, stop, config, dataDir, api: new ApiClient(running.url) };
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * Minimal HTTP client for the API: JSON in, JSON out, optional key. Every answer is checked against what
 * /openapi.json documents for it (test/helpers/documented.ts); a mismatch fails the request.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  withKey(apiKey: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, apiKey);
  }

  private typedClient?: TypedClient;
  /** The repository's typed client (client/) for the same service and key, its answers checked against the document. */
  get typed(): TypedClient {
    return (this.typedClient ??= documentedClient(this.baseUrl, this.apiKey));
  }

  async request<T = any>(
    method: string,
    pathAndQuery: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const response = await fetch(this.baseUrl + pathAndQuery, {
      method,
      headers: {
        "content-type": "application/json",
        ...(this.apiKey ? { "x-api-key": this.apiKey } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // non-JSON body (documents)
    }
    checkDocumented({
      method,
      path: pathAndQuery.split("?")[0],
      status: response.status,
      headers: response.headers,
      body: parsed,
    });
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  get<T = any>(pathname: string, query: Record<string, string | undefined> = {}, headers?: Record<string, string>) {
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][]);
    const qs = params.toString();
    return this.request<T>("GET", qs ? `${pathname}?${qs}` : pathname, undefined, headers);
  }

  post<T = any>(pathname: string, body: unknown, headers?: Record<string, string>) {
    return this.request<T>("POST", pathname, body, headers);
  }
}
