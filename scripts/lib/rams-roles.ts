import { getAddress, type Signer } from "ethers";
import type { Deployment } from "../../service/chains/deployments";
import { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { ComplianceProvider__factory } from "../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";

export interface RamsRoles {
  /** Receives ENFORCER_ROLE on the registry (freeze / unfreeze); must not be the registry admin. */
  enforcer?: string;
  /** Becomes the owner of the compliance provider (grant / revoke principal eligibility). */
  complianceOwner?: string;
}

/**
 * Hands out the RAMS roles of a deployment with `admin`, the registry's DEFAULT_ADMIN_ROLE holder and the compliance
 * provider's current owner (the deployer, after deploySuite): ENFORCER_ROLE to `enforcer`, ownership of the compliance
 * provider to `complianceOwner`. Idempotent: a role already held, or an owner already in place, sends nothing.
 */
export async function setupRamsRoles(
  admin: Signer,
  deployment: Deployment,
  roles: RamsRoles,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  const mandate = AgentMandate__factory.connect(deployment.contracts.AgentMandate, admin);
  const compliance = ComplianceProvider__factory.connect(deployment.contracts.ComplianceProvider, admin);
  const chainId = deployment.chainId;
  if (roles.enforcer) {
    const enforcer = getAddress(roles.enforcer);
    const role = await mandate.ENFORCER_ROLE();
    if (await mandate.hasRole(await mandate.DEFAULT_ADMIN_ROLE(), enforcer)) {
      throw new Error(
        `The RAMS enforcer ${enforcer} is the registry admin: the registry refuses one account holding both (AdminEnforcerOverlap)`,
      );
    }
    if (!(await mandate.hasRole(role, enforcer))) {
      await (await mandate.grantRole(role, enforcer)).wait();
      log(`chain ${chainId}: ENFORCER_ROLE granted to ${enforcer}`);
    }
  }
  if (roles.complianceOwner) {
    const owner = getAddress(roles.complianceOwner);
    if ((await compliance.owner()) !== owner) {
      await (await compliance.transferOwnership(owner)).wait();
      log(`chain ${chainId}: ComplianceProvider owned by ${owner}`);
    }
  }
}
