import type { Chain, ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { ApiKeyRecord } from "../store/api-keys";
import type { Stores } from "../store/stores";

/** The service's own relayer, as domain logic sees it: which chains it serves, and its addresses there. */
export interface RelayerAddresses {
  has(chainId: number): boolean;
  /** Its own key's address: the one clients approve, and that holds agents for their payers. */
  address(chainId: number): string;
  /** One of its keys' addresses, each in turn (RELAYER_EXTRA_PRIVATE_KEYS), for batches any key may send. */
  nextKeyAddress(chainId: number): string;
}

/** What domain logic, the prepare methods and the read views may use of the service: records, chains, the relayer's addresses. */
export type DomainServices = Pick<
  Stores,
  | "agents"
  | "tokens"
  | "ramsExecutors"
  | "investors"
  | "kyc"
  | "kycLinks"
  | "offerings"
  | "dividends"
  | "tokenControls"
  | "documents"
  | "payments"
  | "sealer"
> & {
  config: Config;
  chains: ChainRegistry;
  /** Where clients reach this service (agent registration files are served from it). */
  baseUrl: string;
  relayer: RelayerAddresses;
};

/**
 * What domain logic works with: the records it reads (`services`, a narrow view of the stores), the chain, and the
 * caller's key where records are scoped to it. A method's context and a read's both are one.
 */
export interface DomainContext<S = DomainServices> {
  services: S;
  chain: Chain;
  apiKey?: ApiKeyRecord;
  /**
   * Given by a prepare: takes a pre-check that reads the chain and decides nothing the plan builds on (the signer
   * holds a role), to run beside the rest of the plan and the gas estimates instead of before them. The prepare awaits
   * it before it answers, and its refusal comes before anything else the plan or the build found. Absent, the caller
   * awaits the check where it makes it.
   */
  deferCheck?: (check: Promise<void>) => void;
}
