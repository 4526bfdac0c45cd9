import type { JsonRpcProvider, Wallet } from "ethers";
import type { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";

/**
 * What the RAMS executor set-up (rams-setup.ts) is given and what it answers, and the context its steps
 * (rams-setup-steps.ts) share.
 */

export interface SelectorSpec {
  selector: string;
  hasAmount: boolean;
  amountIndex: number;
  /** The name it was given by (transferFrom, approve, …), for the report. */
  name?: string;
}

export interface ExecutorSetupOptions {
  provider: JsonRpcProvider;
  chainId: number;
  registry: string;
  complianceProvider: string;
  principal: string;
  /** The executor's owner (may set actions); default: the registry admin. */
  owner?: string;
  selectors: SelectorSpec[];
  /** The mandate's asset, for the principal's approval (step 4); without it the step is skipped with an instruction. */
  asset?: string;
  /** The approval amount (default: unlimited). */
  allowance?: bigint;
  enforcer?: string;
  /** With identityRef, step 6 makes the principal eligible (expiresAt: 0 = no expiry). */
  identityRef?: string;
  expiresAt?: number;
  /** Reuse this executor instead of deploying one. */
  executor?: string;
  /** admin: the registry's DEFAULT_ADMIN_ROLE holder (required); the others are optional. */
  keys: { admin: Wallet; owner?: Wallet; principal?: Wallet; compliance?: Wallet };
  log?: (line: string) => void;
}

export interface PreparedTransaction {
  from: string;
  to: string;
  data: string;
  value: "0x00";
  chainId: number;
  description: string;
}

export interface SetupStep {
  step: number;
  name:
    "deploy-executor" | "grant-recorder-role" | "set-action" | "principal-approval" | "enforcer" | "grant-principal";
  status: "done" | "already" | "prepared" | "skipped";
  txHash?: string;
  /** The unsigned transaction for the wallet whose key was not given (status prepared). */
  transaction?: PreparedTransaction;
  /** The API method that prepares the same transaction. */
  api?: { method: string; body: Record<string, unknown> };
  note?: string;
  [detail: string]: unknown;
}

export interface ExecutorSetupResult {
  chainId: number;
  registry: string;
  complianceProvider: string;
  principal: string;
  executor: string;
  owner: string;
  steps: SetupStep[];
  /** The transactions other wallets still have to sign, in order. */
  pending: PreparedTransaction[];
  complete: boolean;
}

/** What every set-up step shares: the options, the admin's signer, the registry, and the list of steps taken. */
export interface SetupContext {
  o: ExecutorSetupOptions;
  admin: Wallet;
  adminAddress: string;
  principal: string;
  owner: string;
  registry: ReturnType<typeof AgentMandate__factory.connect>;
  registryAddress: string;
  steps: SetupStep[];
  log: (line: string) => void;
  prepared: (from: string, to: string, data: string, description: string) => PreparedTransaction;
  requireKey: (wallet: Wallet | undefined, expected: string, variable: string) => Wallet | undefined;
  sent: (tx: Promise<{ hash: string; wait(): Promise<unknown> }>) => Promise<string>;
}
