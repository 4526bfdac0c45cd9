import { runAdminCommand, CREDIT_METHODS } from "../operator/commands";
import { formatUnits } from "ethers";
import type { PriceTier } from "../auth/access-rules";
import { PLANS } from "../model/plans";
import { USDC_DECIMALS } from "../payments/pricing";
import type { ApiKeyRecord } from "../store/api-keys";
import type { OperatorRecord } from "../store/operators";
import type { KeysView } from "../wire/console-changes";
import type { Services } from "../usecases/services";

/** An operation with a price and the tier whose default it takes (app.ts pricedOperations). */
export interface PricedOperation {
  operation: string;
  tier: PriceTier;
}

/** API keys with their credits and signers, the signers of every key, and the x402 price of every operation. */
export async function keysView(services: Services, operations: PricedOperation[]): Promise<KeysView> {
  const [keys, signers, overrides] = await Promise.all([
    services.apiKeys.list(),
    services.signers.list(),
    services.prices.overrides(),
  ]);
  const overridden = new Set(overrides.map((o) => o.operation));
  const items = await Promise.all(
    keys.reverse().map(async (k) => ({
      ...keyView(k),
      credits: await services.credits.balances(k.id),
      signers: signers.filter((s) => s.keyId === k.id).map((s) => s.address),
    })),
  );
  const prices = await Promise.all(
    operations.map(async ({ operation, tier }) => ({
      operation,
      tier,
      amount: formatUnits(await services.prices.of(operation, tier), USDC_DECIMALS),
      overridden: overridden.has(operation),
    })),
  );
  return {
    items,
    allKeysSigners: signers.filter((s) => s.keyId === null).map((s) => s.address),
    prices,
    plans: [...PLANS],
    creditMethods: CREDIT_METHODS,
  };
}

const keyView = (k: ApiKeyRecord) => ({
  id: k.id,
  email: k.email,
  plan: k.plan,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
});

/** A change to keys, credits, signers or prices: the admin command itself (its checks, its audit), as this operator. */
export async function keysCommand(
  services: Services,
  operator: OperatorRecord,
  operations: PricedOperation[],
  command: Parameters<typeof runAdminCommand>[1],
): Promise<unknown> {
  return runAdminCommand(services, command, { operations: operations.map((o) => o.operation), actor: operator.email });
}

/** Creates a key: the secret is in this answer only (the audit log and the database keep its hash at most). */
export async function createKey(
  services: Services,
  operator: OperatorRecord,
  body: { email: string; plan: string },
): Promise<{ key: KeysView["items"][number]; apiKey: string }> {
  const created = (await runAdminCommand(
    services,
    { command: "keys.create", email: body.email, plan: body.plan },
    { operations: [], actor: operator.email },
  )) as ApiKeyRecord & {
    apiKey: string;
    credits: Record<string, number>;
  };
  return { key: { ...keyView(created), credits: created.credits, signers: [] }, apiKey: created.apiKey };
}
