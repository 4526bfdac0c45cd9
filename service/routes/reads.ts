import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { badRequest, notFound } from "../errors";
import { address, boundedIntegerString, chainIdInput, decimalAmount, email, pageFields } from "../wire/fields";
import { KYC_STATUSES } from "../store/kyc";
import { receiveCheckedFiles } from "../http/checked-upload";
import { defineRoute } from "../http/route";
import {
  Allowance,
  BalanceWhitelist,
  DividendDistribution,
  InvestorInfo,
  InvestorList,
  TokenDocsUpload,
  TokenRecordView,
  VisibleTokens,
  WhitelistStatus,
} from "../reads/tokenization-schemas";
import {
  allowanceView,
  balanceWhitelistView,
  dividendView,
  tokenContext,
  tokenHolding,
  tokenRecordView,
} from "../reads/tokenization";
import { investorInfoView, investorsView, investorWallet } from "../reads/investors";
import type { Services } from "../usecases/services";
import { DOCUMENT_FIELDS, MAX_DOCUMENT_BYTES, startTokenDocumentsUpload } from "../usecases/token-documents";
import { documentTypeOfFile } from "../model/document-types";
import { clientSubject } from "../auth/client-address";
import { TokenizerInfo, tokenizerInfoView } from "../domains/tokenization/views";
import { TokenControlList, TransferCheck, tokenControlsView, transferCheckView } from "../reads/issuer-controls";
import { CapTable, capTableCsv, capTableView } from "../reads/cap-table";
import { aliasOf } from "../wire/field-aliases";

const symbol = z.string().trim().min(1);

/** GET /get-token-info */
function getTokenInfoRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-token-info",
    summary: "The token record of tokenSymbol, or the symbols and tokenizer e-mails the key may see",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: z.union([TokenRecordView, VisibleTokens]),
    query: z.object({ tokenSymbol: symbol.optional(), chainId: chainIdInput.optional() }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      if (!query.tokenSymbol) return services.tokens.visibleTo(apiKey.id);
      const { token } = await tokenContext(services, apiKey, query.tokenSymbol);
      return tokenRecordView(services, token);
    },
  });
}

/** GET /get-tokenizer-info */
function getTokenizerInfoRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-tokenizer-info",
    summary: "Token, payment-token and escrow addresses of a token, with its tokenizer",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: TokenizerInfo,
    query: z.object({ tokenSymbol: symbol }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      return tokenizerInfoView((await tokenContext(services, apiKey, query.tokenSymbol)).token);
    },
  });
}

/** GET /get-balance-whitelist */
function getBalanceWhitelistRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-balance-whitelist",
    summary: "An investor's token balance (tokenBalance) and whitelist status, by address or recorded e-mail",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: BalanceWhitelist,
    query: z.object({
      tokenSymbol: symbol,
      investorAddress: address.optional(),
      walletAddress: aliasOf(address.optional(), "investorAddress"),
      investorEmail: email.optional(),
    }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
      const wallet = await investorWallet(
        services,
        token,
        query.investorAddress ?? query.walletAddress,
        query.investorEmail,
      );
      return balanceWhitelistView(ctx, token, wallet);
    },
  });
}

/** GET /get-whitelist-status */
function getWhitelistStatusRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-whitelist-status",
    summary: "Whether a wallet is whitelisted for a token (read from the chain)",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: WhitelistStatus,
    query: z.object({
      tokenSymbol: symbol,
      investorAddress: address.optional(),
      address: aliasOf(address.optional(), "investorAddress"),
    }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      const wallet = query.investorAddress ?? query.address;
      if (!wallet) throw badRequest("investorAddress is required", { field: "investorAddress" });
      const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
      const { whitelisted } = await tokenHolding(ctx, token, wallet);
      const answer: z.infer<typeof WhitelistStatus> = {
        tokenSymbol: token.symbol,
        investorAddress: wallet,
        whitelistStatus: whitelisted,
        whitelisted,
      };
      return answer;
    },
  });
}

/** GET /get-allowance */
function getAllowanceRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-allowance",
    summary: "Allowance of spenderAddress over ownerAddress's tokens (payment tokens need chainId)",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: Allowance,
    query: z.object({
      tokenSymbol: symbol,
      ownerAddress: address,
      spenderAddress: address,
      chainId: chainIdInput.optional(),
    }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      return allowanceView(services, apiKey, {
        ...query,
        chainId: query.chainId === undefined ? undefined : String(query.chainId),
      });
    },
  });
}

/** GET /get-investor-info */
function getInvestorInfoRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-investor-info",
    summary: "An investor of a token by e-mail: names, wallets, balances, whitelist status, KYC status and kycUrl",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: InvestorInfo,
    query: z.object({
      tokenSymbol: symbol,
      email: email.optional(),
      investorEmail: aliasOf(email.optional(), "email"),
    }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      const investorEmail = query.email ?? query.investorEmail;
      if (!investorEmail) throw badRequest("email is required", { field: "email" });
      const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
      return investorInfoView(ctx, token, investorEmail);
    },
  });
}

/** GET /get-investors */
function getInvestorsRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-investors",
    summary:
      "Investors with their KYC status, kycUrl (while pending) and wallets: of a token, or onboarded in the key's scope",
    tags: ["reads", "onboarding"],
    access: ACCESS.keyEndpoint,
    response: InvestorList,
    query: z.object({ tokenSymbol: symbol.optional(), kycStatus: z.enum(KYC_STATUSES).optional(), ...pageFields }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      const token = query.tokenSymbol ? (await tokenContext(services, apiKey, query.tokenSymbol)).token : undefined;
      return investorsView(services, apiKey, {
        token,
        kycStatus: query.kycStatus,
        limit: query.limit,
        offset: query.offset,
      });
    },
  });
}

/** GET /get-dividend-distribution */
function getDividendDistributionRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-dividend-distribution",
    summary: "Dividend distributions of a token and each holder's withdrawable and withdrawn amounts",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: DividendDistribution,
    query: z.object({ tokenSymbol: symbol, holderAddress: address.optional() }),
    handler: async ({ query, caller }) => {
      const apiKey = caller.apiKey!;
      const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
      return dividendView(ctx, token, query.holderAddress);
    },
  });
}

/** GET /check-transfer */
function checkTransferRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/check-transfer",
    summary: "Whether the token lets from send amount to to now: its ERC-1404 restriction code and message",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: TransferCheck,
    query: z.object({ tokenSymbol: symbol, from: address, to: address, amount: decimalAmount }),
    handler: async ({ query, caller }) => {
      const { ctx, token } = await tokenContext(services, caller.apiKey!, query.tokenSymbol);
      return transferCheckView(ctx, token, query);
    },
  });
}

/** GET /get-holders */
function getHoldersRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-holders",
    summary:
      "The cap table as of a block: holders, balances, frozen amounts and share of supply, from the token's events (CSV with format=csv)",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: {
      200: {
        description: "The cap table (JSON), or its page as CSV for a registrar (format=csv or Accept: text/csv)",
        schema: CapTable,
        content: {
          mediaType: "text/csv",
          schema: {
            type: "string",
            description: "address,email,balance,balanceRaw,frozenAmount,frozenAmountRaw,addressFrozen,shareOfSupply",
          },
        },
      },
    },
    query: z.object({
      tokenSymbol: symbol,
      blockNumber: boundedIntegerString(BigInt(Number.MAX_SAFE_INTEGER), "2^53-1")
        .optional()
        .meta({ description: "Default: the latest block" }),
      format: z.enum(["json", "csv"]).optional(),
      ...pageFields,
    }),
    handler: async ({ query, caller, req, res }) => {
      const { ctx, token } = await tokenContext(services, caller.apiKey!, query.tokenSymbol);
      const table = await capTableView(ctx, token, {
        blockNumber: query.blockNumber === undefined ? undefined : Number(query.blockNumber),
        limit: query.limit,
        offset: query.offset,
      });
      const csv =
        query.format === "csv" || (query.format === undefined && /\btext\/csv\b/.test(req.get("accept") ?? ""));
      if (!csv) return table;
      res.setHeader("Content-Type", "text/csv; charset=utf-8");
      res.setHeader("Content-Disposition", `attachment; filename="${token.symbol}-holders-${table.blockNumber}.csv"`);
      res.status(200).end(capTableCsv(table));
    },
  });
}

/** GET /get-token-controls */
function getTokenControlsRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-token-controls",
    summary:
      "Issuer controls confirmed on a token (freezes, forced transfers, recoveries, pauses, role changes), oldest first",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: TokenControlList,
    query: z.object({ tokenSymbol: symbol, account: address.optional(), ...pageFields }),
    handler: async ({ query, caller }) => {
      const { ctx, token } = await tokenContext(services, caller.apiKey!, query.tokenSymbol);
      return tokenControlsView(ctx, token, query);
    },
  });
}

/** PATCH /patch-token-docs */
function patchTokenDocsRoute(services: Services) {
  return defineRoute({
    method: "patch",
    path: "/patch-token-docs",
    summary:
      "Upload token documents (multipart: tokenLogotype, subscriptionAgreement, legalDocs; PDF, PNG, JPEG, WebP or plain text, 10 MB each); content-addressed",
    description:
      "Each file's type is taken from its first bytes, never from the declared one: anything but PDF, PNG, JPEG, WebP or plain UTF-8 text is refused " +
      "with 415 before the rest of it is read. Send tokenSymbol before the files (or in the query): a token of another key is then refused before any file is read.",
    tags: ["reads"],
    access: ACCESS.keyEndpoint,
    response: TokenDocsUpload,
    rateLimited: true,
    admit: (req) => services.requestLimits.of("uploadsPerIp").admit(clientSubject(req)),
    query: z.object({
      tokenSymbol: symbol
        .optional()
        .meta({ description: "The token, here instead of the form field (checked before the body is read)" }),
    }),
    // Multipart: the handler parses it, so the schema only documents the text field.
    documentedBody: z.object({ tokenSymbol: symbol }),
    multipartFiles: DOCUMENT_FIELDS.map((d) => d.field),
    handler: async ({ req, res, caller, query }) => {
      const upload = await startTokenDocumentsUpload(services, caller.apiKey!, query.tokenSymbol);
      const files = await receiveCheckedFiles(req, res, {
        fields: DOCUMENT_FIELDS.map((d) => d.field),
        maxFileBytes: MAX_DOCUMENT_BYTES,
        beforeFile: (request) => upload.scope(request.body?.tokenSymbol),
      });
      return upload.store(files, req.body?.tokenSymbol);
    },
  });
}

/** GET /documents/{sha256} */
function documentsBySha256Route(services: Services) {
  return defineRoute({
    method: "get",
    path: "/documents/{sha256}",
    summary: "A token document by its content hash (the hash is the capability), as an attachment",
    description:
      "Served as a download (Content-Disposition: attachment) under Content-Security-Policy: sandbox with X-Content-Type-Options: nosniff, with the type " +
      "its bytes show (PDF, PNG, JPEG, WebP, plain text); anything else stored by an older version is served as application/octet-stream.",
    tags: ["reads"],
    access: ACCESS.public,
    response: {
      200: {
        description: "The document, with the type its first bytes show",
        content: { mediaType: "application/octet-stream", schema: { type: "string", format: "binary" } },
      },
    },
    handler: async ({ req, res }) => {
      const sha = String(req.params.sha256 ?? "").toLowerCase();
      if (!/^[0-9a-f]{64}$/.test(sha)) throw badRequest("sha256 must be 64 hex characters", { field: "sha256" });
      const doc = await services.documents.get(sha);
      if (!doc) throw notFound(`No document ${sha}`);
      // The type is what the bytes are, whatever was declared when they were stored (older versions kept the uploader's).
      const type = documentTypeOfFile(doc.content);
      res.setHeader("Content-Type", type?.mediaType ?? "application/octet-stream");
      res.setHeader("Content-Disposition", `attachment; filename="${sha}.${type?.extension ?? "bin"}"`);
      res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
      res.status(200).end(doc.content);
    },
  });
}

/** Key-scoped reads of tokenization records (records from the database, live values from the chain). */
export function readRoutes(services: Services) {
  return [
    getTokenInfoRoute(services),
    getTokenizerInfoRoute(services),
    getBalanceWhitelistRoute(services),
    getWhitelistStatusRoute(services),
    getAllowanceRoute(services),
    getInvestorInfoRoute(services),
    getInvestorsRoute(services),
    getDividendDistributionRoute(services),
    checkTransferRoute(services),
    getHoldersRoute(services),
    getTokenControlsRoute(services),
    patchTokenDocsRoute(services),
    documentsBySha256Route(services),
  ];
}
