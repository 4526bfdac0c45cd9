import type { Chain } from "../chains/registry";
import type { ApiKeyRecord } from "../store/api-keys";

/**
 * What domain logic works with: the records it reads (`services`, a narrow view of the stores), the chain, and the
 * caller's key where records are scoped to it. A method's context and a read's both are one.
 */
export interface DomainContext<S = object> {
  services: S;
  chain: Chain;
  apiKey?: ApiKeyRecord;
}
