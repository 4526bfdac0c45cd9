import { z } from "zod";
import { responseFields } from "../../wire/responses";
import { chainIdHex } from "../../chains/networks";
import type { TokenRecord } from "../../store/tokens";

const { address, hash32, int } = responseFields;

/** A token's addresses and tokenizer, as GET /get-tokenizer-info and the newTokenization prepare answer them. */
export const TokenizerInfo = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    paymentTokenAddress: address,
    paymentTokenSymbol: z.string(),
    escrowAddress: address.meta({ description: "The token's StoEscrow" }),
    chainId: z.string().meta({ description: "0x hex" }),
    tokenizerAddress: address,
    companyWalletAddress: address,
    email: z.string(),
    tokenizerEmail: z.string(),
    name: z.string(),
    createdTxHash: hash32,
    createdBlock: int,
  })
  .meta({ id: "TokenizerInfo" });

export function tokenizerInfoView(token: TokenRecord): z.infer<typeof TokenizerInfo> {
  return {
    tokenSymbol: token.symbol,
    tokenAddress: token.tokenAddress,
    paymentTokenAddress: token.paymentToken.address,
    paymentTokenSymbol: token.paymentToken.symbol,
    escrowAddress: token.escrowAddress,
    chainId: chainIdHex(token.chainId),
    tokenizerAddress: token.tokenizerAddress,
    companyWalletAddress: token.companyWalletAddress,
    email: token.tokenizerEmail,
    tokenizerEmail: token.tokenizerEmail,
    name: token.name,
    createdTxHash: token.createdTxHash,
    createdBlock: token.createdBlock,
  };
}
