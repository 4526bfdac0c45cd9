import { z } from "zod";
import { ZeroAddress } from "ethers";
import { TokenFactory__factory } from "../../../typechain-types/factories/contracts/tokenization/TokenFactory__factory";
import { contractAt } from "../../chains/contract-at";
import { securityTokenInterface, stoEscrowInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodContext, type MethodDefinition } from "../types";
import type { PlannedCall } from "../../model/batch";
import type { TokenRecord } from "../../store/tokens";
import { ACCESS } from "../../auth/access-rules";
import { authorizedToken, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";
import { escrowOf } from "../../domains/offerings/offerings";

/**
 * A token and its escrow run behind ERC-1967 proxies and move to a new version only when their tokenizer schedules an
 * implementation the TokenFactory publishes, and only after the upgrade delay every holder can see (DelayedUpgrades).
 * These methods schedule, cancel and execute that move for both contracts at once.
 */
const body = z.object({ ...signerFields, tokenSymbol: z.string().trim().min(1) });
type Body = z.infer<typeof body>;

interface Side {
  name: "token" | "escrow";
  address: string;
  iface: typeof securityTokenInterface | typeof stoEscrowInterface;
  current: string;
  published: string;
  scheduled: string;
  readyAt: number;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** Both contracts' running, published (by the token's registry, the factory that made it) and scheduled versions. */
async function sidesOf(ctx: MethodContext, token: TokenRecord): Promise<Side[]> {
  const contract = securityToken(ctx, token);
  const escrow = escrowOf(ctx, token);
  const factory = contractAt(TokenFactory__factory, await contract.implementationRegistry(), ctx.chain.provider);
  const [tokenImpl, escrowImpl, tokenPublished, escrowPublished, tokenScheduled, escrowScheduled] = await Promise.all([
    contract.implementation(),
    escrow.implementation(),
    factory.tokenImplementation(),
    factory.escrowImplementation(),
    contract.scheduledUpgrade(),
    escrow.scheduledUpgrade(),
  ]);
  return [
    {
      name: "token",
      address: token.tokenAddress,
      iface: securityTokenInterface,
      current: tokenImpl,
      published: tokenPublished,
      scheduled: tokenScheduled.scheduled,
      readyAt: Number(tokenScheduled.readyAt),
    },
    {
      name: "escrow",
      address: token.escrowAddress,
      iface: stoEscrowInterface,
      current: escrowImpl,
      published: escrowPublished,
      scheduled: escrowScheduled.scheduled,
      readyAt: Number(escrowScheduled.readyAt),
    },
  ];
}

function upgradeMethod(
  name: string,
  summary: string,
  steps: (ctx: MethodContext, token: TokenRecord, sides: Side[]) => Promise<{ calls: PlannedCall[]; info: object }>,
): MethodDefinition<Body> {
  return defineMethod({
    name,
    area: "tokenization",
    summary,
    body,
    access: ACCESS.keyMethod,
    metered: true,
    events: ["token.upgrade"],
    signerOf: (b: Body) => b.signerAddress,
    async plan(ctx, b) {
      const token = await authorizedToken(ctx, b.tokenSymbol);
      await requireTokenizer(ctx, token, b.signerAddress, "upgrade the token");
      const { calls, info } = await steps(ctx, token, await sidesOf(ctx, token));
      return {
        signer: b.signerAddress,
        calls,
        info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, ...info },
        record: { tokenSymbol: token.symbol },
      };
    },
    onConfirmed: recordEventsOfRecordedToken(),
  });
}

/** Schedules the token and its escrow for the implementations the factory publishes now. Tokenizer. */
export const scheduleTokenUpgrade = upgradeMethod(
  "scheduleTokenUpgrade",
  "Schedule the token and its escrow for the version the factory publishes; executable after the upgrade delay. Tokenizer",
  async (ctx, token, sides) => {
    const behind = sides.filter((s) => s.current !== s.published && s.scheduled !== s.published);
    if (!behind.length) {
      throw preflightError(`${token.symbol} and its escrow already run, or are scheduled for, the published version`, {
        field: "tokenSymbol",
      });
    }
    const delay = Number(await securityToken(ctx, token).UPGRADE_DELAY());
    return {
      calls: behind.map((s) => ({
        to: s.address,
        data: s.iface.encodeFunctionData("scheduleUpgrade", [s.published]),
        description: `schedule the ${s.name} of ${token.symbol} for implementation ${s.published}`,
      })),
      info: {
        scheduled: Object.fromEntries(behind.map((s) => [s.name, s.published])),
        upgradeDelaySeconds: delay,
      },
    };
  },
);

/** Cancels what is scheduled. Tokenizer. */
export const cancelTokenUpgrade = upgradeMethod(
  "cancelTokenUpgrade",
  "Cancel the scheduled upgrade of the token and its escrow. Tokenizer",
  async (_ctx, token, sides) => {
    const scheduled = sides.filter((s) => s.scheduled !== ZeroAddress);
    if (!scheduled.length) throw preflightError(`no upgrade of ${token.symbol} is scheduled`, { field: "tokenSymbol" });
    return {
      calls: scheduled.map((s) => ({
        to: s.address,
        data: s.iface.encodeFunctionData("cancelUpgrade"),
        description: `cancel the upgrade of the ${s.name} of ${token.symbol} to ${s.scheduled}`,
      })),
      info: { cancelled: Object.fromEntries(scheduled.map((s) => [s.name, s.scheduled])) },
    };
  },
);

/** Executes the scheduled upgrades whose delay is over (UUPS upgradeToAndCall, no call). Tokenizer. */
export const executeTokenUpgrade = upgradeMethod(
  "executeTokenUpgrade",
  "Execute the scheduled upgrade of the token and its escrow once the delay is over. Tokenizer",
  async (ctx, token, sides) => {
    const scheduled = sides.filter((s) => s.scheduled !== ZeroAddress);
    if (!scheduled.length) throw preflightError(`no upgrade of ${token.symbol} is scheduled`, { field: "tokenSymbol" });
    const now = (await ctx.chain.provider.getBlock("latest"))?.timestamp ?? Math.floor(Date.now() / 1000);
    const waiting = scheduled.filter((s) => s.readyAt > now);
    if (waiting.length) {
      const first = Math.min(...waiting.map((s) => s.readyAt));
      throw preflightError(
        `the upgrade of ${token.symbol} may be executed from ${iso(first)} on (the upgrade delay holders are given)`,
        { field: "tokenSymbol", executableAt: iso(first) },
      );
    }
    return {
      calls: scheduled.map((s) => ({
        to: s.address,
        data: s.iface.encodeFunctionData("upgradeToAndCall", [s.scheduled, "0x"]),
        description: `upgrade the ${s.name} of ${token.symbol} to ${s.scheduled}`,
      })),
      info: {
        upgraded: Object.fromEntries(scheduled.map((s) => [s.name, { from: s.current, to: s.scheduled }])),
      },
    };
  },
);
