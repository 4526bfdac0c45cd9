import { randomUUID } from "node:crypto";
import multer from "multer";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { badRequest, notFound, outOfCredits } from "../errors";
import { address, chainIdInput, email, pageFields } from "../wire/fields";
import { KYC_STATUSES } from "../store/kyc";
import { defineRoute } from "../http/route";
import {
  Allowance,
  BalanceWhitelist,
  DividendDistribution,
  InvestorInfo,
  InvestorList,
  TokenDocsUpload,
  TokenizerInfo,
  TokenRecordView,
  VisibleTokens,
  WhitelistStatus,
  allowanceView,
  balanceWhitelistView,
  dividendView,
  documentUrl,
  investorInfoView,
  investorsView,
  investorWallet,
  tokenContext,
  tokenizerInfoView,
  tokenHolding,
  tokenRecordView,
} from "../reads/tokenization";
import type { Services } from "../composition";

const symbol = z.string().trim().min(1);
const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 10 * 1024 * 1024, files: 3 } });
const DOCUMENT_FIELDS = [
  { field: "tokenLogotype", document: "logotype" },
  { field: "subscriptionAgreement", document: "subscriptionAgreement" },
  { field: "legalDocs", document: "legalDocs" },
] as const;

/** Key-scoped reads of tokenization records (records from the database, live values from the chain). */
export function readRoutes(services: Services) {
  return [
    defineRoute({
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
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: "get",
      path: "/get-balance-whitelist",
      summary: "An investor's token balance (tokenBalance) and whitelist status, by address or recorded e-mail",
      tags: ["reads"],
      access: ACCESS.keyEndpoint,
      response: BalanceWhitelist,
      query: z.object({ tokenSymbol: symbol, investorAddress: address.optional(), walletAddress: address.optional(), investorEmail: email.optional() }),
      handler: async ({ query, caller }) => {
        const apiKey = caller.apiKey!;
        const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
        const wallet = await investorWallet(services, token, query.investorAddress ?? query.walletAddress, query.investorEmail);
        return balanceWhitelistView(ctx, token, wallet);
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-whitelist-status",
      summary: "Whether a wallet is whitelisted for a token (read from the chain)",
      tags: ["reads"],
      access: ACCESS.keyEndpoint,
      response: WhitelistStatus,
      query: z.object({ tokenSymbol: symbol, investorAddress: address.optional(), address: address.optional() }),
      handler: async ({ query, caller }) => {
        const apiKey = caller.apiKey!;
        const wallet = query.investorAddress ?? query.address;
        if (!wallet) throw badRequest("investorAddress is required", { field: "investorAddress" });
        const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
        const { whitelisted } = await tokenHolding(ctx, token, wallet);
        const answer: z.infer<typeof WhitelistStatus> = { tokenSymbol: token.symbol, investorAddress: wallet, whitelistStatus: whitelisted, whitelisted };
        return answer;
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-allowance",
      summary: "Allowance of spenderAddress over ownerAddress's tokens (payment tokens need chainId)",
      tags: ["reads"],
      access: ACCESS.keyEndpoint,
      response: Allowance,
      query: z.object({ tokenSymbol: symbol, ownerAddress: address, spenderAddress: address, chainId: chainIdInput.optional() }),
      handler: async ({ query, caller }) => {
        const apiKey = caller.apiKey!;
        return allowanceView(services, apiKey, { ...query, chainId: query.chainId === undefined ? undefined : String(query.chainId) });
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-investor-info",
      summary: "An investor of a token by e-mail: names, wallets, balances, whitelist status, KYC status and kycUrl",
      tags: ["reads"],
      access: ACCESS.keyEndpoint,
      response: InvestorInfo,
      query: z.object({ tokenSymbol: symbol, email: email.optional(), investorEmail: email.optional() }),
      handler: async ({ query, caller }) => {
        const apiKey = caller.apiKey!;
        const investorEmail = query.email ?? query.investorEmail;
        if (!investorEmail) throw badRequest("email is required", { field: "email" });
        const { ctx, token } = await tokenContext(services, apiKey, query.tokenSymbol);
        return investorInfoView(ctx, token, investorEmail);
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-investors",
      summary: "Investors with their KYC status, kycUrl (while pending) and wallets: of a token, or onboarded in the key's scope",
      tags: ["reads", "onboarding"],
      access: ACCESS.keyEndpoint,
      response: InvestorList,
      query: z.object({ tokenSymbol: symbol.optional(), kycStatus: z.enum(KYC_STATUSES).optional(), ...pageFields }),
      handler: async ({ query, caller }) => {
        const apiKey = caller.apiKey!;
        const token = query.tokenSymbol ? (await tokenContext(services, apiKey, query.tokenSymbol)).token : undefined;
        return investorsView(services, apiKey, { token, kycStatus: query.kycStatus, limit: query.limit, offset: query.offset });
      },
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: "patch",
      path: "/patch-token-docs",
      summary: "Upload token documents (multipart: tokenLogotype, subscriptionAgreement, legalDocs); content-addressed",
      tags: ["reads"],
      access: ACCESS.keyEndpoint,
      response: TokenDocsUpload,
      // Multipart: the handler parses it (multer), so the schema only documents the text field.
      documentedBody: z.object({ tokenSymbol: symbol }),
      multipartFiles: DOCUMENT_FIELDS.map((d) => d.field),
      handler: async ({ req, res, caller }) => {
        await new Promise<void>((resolve, reject) =>
          upload.fields(DOCUMENT_FIELDS.map((d) => ({ name: d.field, maxCount: 1 })))(req, res, (error: unknown) =>
            error ? reject(badRequest(`Upload rejected: ${(error as Error).message}`, { field: (error as { field?: string }).field })) : resolve(),
          ),
        );
        const apiKey = caller.apiKey!;
        const tokenSymbol = typeof req.body?.tokenSymbol === "string" ? req.body.tokenSymbol.trim() : "";
        if (!tokenSymbol) throw badRequest("tokenSymbol is required", { field: "tokenSymbol" });
        const { token } = await tokenContext(services, apiKey, tokenSymbol);
        const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
        const present = DOCUMENT_FIELDS.filter((d) => files[d.field]?.[0]);
        if (!present.length) throw badRequest("At least one of tokenLogotype, subscriptionAgreement, legalDocs is required", { field: "tokenLogotype" });
        const refs: Record<string, string> = {};
        await services.db.transaction(async (q) => {
          const spent = await services.credits.spend(q, apiKey.id, "patch-token-docs", `docs:${randomUUID()}`);
          if (!spent.ok) throw outOfCredits("patch-token-docs");
          for (const d of present) {
            const file = files[d.field][0];
            refs[d.field] = await services.documents.put(q, file.buffer, file.mimetype || "application/octet-stream");
            await services.tokens.setDocument(token.id, d.document, refs[d.field], q);
          }
        });
        const answer: z.infer<typeof TokenDocsUpload> = {
          success: true,
          tokenSymbol: token.symbol,
          tokenLogotypeRef: refs.tokenLogotype ?? null,
          tokenLogotype: documentUrl(services, refs.tokenLogotype ?? null),
          subscriptionAgreementRef: refs.subscriptionAgreement ?? null,
          legalDocsRef: refs.legalDocs ?? null,
          subscriptionAgreementIpfs: refs.subscriptionAgreement ?? null,
          legalDocsIpfs: refs.legalDocs ?? null,
        };
        return answer;
      },
    }),
    defineRoute({
      method: "get",
      path: "/documents/{sha256}",
      summary: "A token document by its content hash (the hash is the capability)",
      tags: ["reads"],
      access: ACCESS.public,
      response: { 200: { description: "The document, with the media type it was uploaded with", content: { mediaType: "application/octet-stream", schema: { type: "string", format: "binary" } } } },
      handler: async ({ req, res }) => {
        const sha = String(req.params.sha256 ?? "").toLowerCase();
        if (!/^[0-9a-f]{64}$/.test(sha)) throw badRequest("sha256 must be 64 hex characters", { field: "sha256" });
        const doc = await services.documents.get(sha);
        if (!doc) throw notFound(`No document ${sha}`);
        res.setHeader("Content-Type", doc.mediaType);
        res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
        res.status(200).end(doc.content);
      },
    }),
  ];
}
