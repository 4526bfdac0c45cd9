import { z } from "zod";
import { bknInterface, parseEventLog } from "../chains/contracts";
import { address, chainIdInput } from "../wire/fields";
import { defineMethod } from "./types";
import { ACCESS } from "../auth/access-rules";

const body = z.object({ chainId: chainIdInput, recipientAddress: address });
type Body = z.infer<typeof body>;

/** The governance-token faucet claim behind POST /faucet/bkn, always sent by the relayer. Internal. */
export const faucetBkn = defineMethod({
  name: "faucetBkn",
  area: "faucet",
  internal: true,
  summary: "BKN faucet claim (relayed)",
  body,
  access: ACCESS.faucet,
  relayable: true,
  signerOf: (b: Body) => b.recipientAddress,
  async plan(ctx, b) {
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: ctx.chain.deployment.contracts.BKN,
          data: bknInterface.encodeFunctionData("faucet", [b.recipientAddress]),
          description: `BKN faucet to ${b.recipientAddress}`,
        },
      ],
      info: { recipientAddress: b.recipientAddress },
      record: { recipientAddress: b.recipientAddress },
    };
  },
  async onConfirmed(_tx, batch) {
    const bkn = batch.chain.deployment.contracts.BKN.toLowerCase();
    for (const log of batch.receipts.flatMap((r) => r.logs)) {
      if (log.address.toLowerCase() !== bkn) continue;
      const event = parseEventLog(bknInterface, log);
      if (event?.name === "FaucetClaimed") {
        return {
          amountRaw: event.args.amount.toString(),
          cooldownEndsAt: new Date(Number(event.args.nextClaimAt) * 1000).toISOString(),
        };
      }
    }
  },
});
