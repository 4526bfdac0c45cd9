import { z } from "zod";
import { responseFields } from "../wire/responses";
import { KYC_STATUSES } from "../store/kyc";
import { KycViewSchema } from "../onboarding/views";

// Response schemas of the tokenization reads (GET /get-*): the views (tokenization.ts, investors.ts) return exactly these.

const { address, hash32, integerText, int } = responseFields;
/** An amount in human units of the token ("12.5"). */
const amount = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .meta({ example: "100" });

export const TokenRecordView = z
  .strictObject({
    uuid: z.string(),
    name: z.string().meta({ description: "Company or asset name" }),
    tokenName: z.string(),
    tokenSymbol: z.string(),
    tokenType: z.string(),
    tokenizerEmail: z.string(),
    companyWalletAddress: address,
    tokenLogotype: z
      .string()
      .nullable()
      .meta({ description: "URL of the uploaded logotype (PATCH /patch-token-docs)" }),
    subscriptionAgreement: z.string().nullable().meta({ description: "Content reference (sha256:…)" }),
    legalDocs: z.string().nullable().meta({ description: "Content reference (sha256:…)" }),
    allowedTokenDecimals: int,
    initialTokenSupply: amount,
    maxTokenSupply: amount.meta({ description: "0: no cap" }),
    url: z.string(),
    paymentToken: z.strictObject({
      symbol: z.string(),
      address,
      decimals: int,
      blockchain: z.strictObject({
        chainId: z.string().meta({ description: "0x hex" }),
        chainName: z.string(),
        blockExplorerUrl: z.string(),
      }),
    }),
  })
  .meta({ id: "TokenRecord", description: "A token record: no contract address (get-tokenizer-info) and no balances" });

export const VisibleTokens = z
  .strictObject({ tokenSymbols: z.array(z.string()), tokenizerEmails: z.array(z.string()) })
  .meta({ id: "VisibleTokens", description: "Without tokenSymbol: the symbols and tokenizer e-mails the key may see" });
/** What the issuer controls add to a holding (additive fields of get-balance-whitelist and get-investor-info). */
function holdingControlFields() {
  return {
    frozenAmount: amount.meta({
      description: "Tokens frozen by the issuer (ERC-7943 getFrozenTokens); may exceed the balance",
    }),
    frozenAmountRaw: integerText,
    unfrozenBalance: amount.meta({
      description: "What the holder may move: the balance less the frozen amount, at least 0",
    }),
    addressFrozen: z.boolean().meta({ description: "The whole address is frozen: it neither sends nor receives" }),
    tokenPaused: z.boolean().meta({ description: "The token is paused: no holder transfers or burns" }),
  };
}

export const BalanceWhitelist = z
  .strictObject({
    tokenSymbol: z.string(),
    investorAddress: address,
    investorEmail: z.string().nullable(),
    tokenBalance: amount,
    tokenBalanceRaw: integerText,
    whitelisted: z.boolean(),
    whitelistStatus: z.boolean(),
    ...holdingControlFields(),
  })
  .meta({ id: "BalanceWhitelist" });

export const WhitelistStatus = z
  .strictObject({
    tokenSymbol: z.string(),
    investorAddress: address,
    whitelistStatus: z.boolean(),
    whitelisted: z.boolean(),
  })
  .meta({ id: "WhitelistStatus" });

export const Allowance = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    ownerAddress: address,
    spenderAddress: address,
    allowance: amount,
    allowanceRaw: integerText,
  })
  .meta({ id: "Allowance" });

export const InvestorInfo = z
  .strictObject({
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    kycUrl: z.string().nullable().meta({ description: "The live onboarding link while the investor is invited" }),
    kycStatus: z.enum(KYC_STATUSES),
    profilePicture: z.null(),
    walletAddress: address.nullable(),
    type: z.string(),
    tokenSymbol: z.string(),
    whitelisted: z.boolean(),
    tokenBalance: amount,
    ...holdingControlFields(),
    wallets: z.array(
      z.strictObject({
        walletAddress: address,
        tokenBalance: amount,
        whitelisted: z.boolean(),
        ...holdingControlFields(),
      }),
    ),
    kyc: KycViewSchema,
    investments: z.array(
      z.strictObject({
        id: z.string(),
        date: z.string(),
        txHash: hash32,
        currency: z.string(),
        amountInUSDT: amount,
        status: z.string().meta({ description: "invest, claimTokens or refund" }),
        tokenSymbol: z.string(),
        offeringId: z.string(),
        offeringName: z.string(),
      }),
    ),
  })
  .meta({ id: "InvestorInfo" });

export const InvestorListEntry = z.strictObject({
  email: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  country: z.string().nullable(),
  kycStatus: z.enum(KYC_STATUSES),
  kycUrl: z.string().nullable(),
  kycWalletAddress: address.nullable(),
  walletAddress: address.nullable(),
  wallets: z.array(z.strictObject({ walletAddress: address, whitelisted: z.boolean(), receivedTokens: z.boolean() })),
});

export const InvestorList = z
  .strictObject({
    tokenSymbol: z.string().nullable(),
    investors: z.array(InvestorListEntry),
    total: int,
    limit: int,
    offset: int,
  })
  .meta({ id: "InvestorList" });

export const DividendDistribution = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    paymentToken: z.strictObject({ symbol: z.string(), address, decimals: int }),
    totalDistributed: amount,
    totalDistributedRaw: integerText,
    distributions: z.array(
      z.strictObject({
        id: z.string(),
        amount,
        amountRaw: integerText,
        distributor: address,
        txHash: hash32,
        blockNumber: int,
        date: z.string(),
      }),
    ),
    holders: z.array(
      z.strictObject({
        address,
        email: z.string().nullable(),
        tokenBalance: amount,
        withdrawable: amount,
        withdrawableRaw: integerText,
        withdrawn: amount,
        withdrawnRaw: integerText,
      }),
    ),
  })
  .meta({ id: "DividendDistribution" });

export const TokenDocsUpload = z
  .strictObject({
    success: z.literal(true),
    tokenSymbol: z.string(),
    tokenLogotypeRef: z.string().nullable(),
    tokenLogotype: z.string().nullable(),
    subscriptionAgreementRef: z.string().nullable(),
    legalDocsRef: z.string().nullable(),
    subscriptionAgreementIpfs: z.string().nullable(),
    legalDocsIpfs: z.string().nullable(),
  })
  .meta({ id: "TokenDocsUpload", description: "Content references (sha256:…) of the uploaded documents" });
