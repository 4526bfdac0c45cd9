import { getAddress, verifyMessage } from "ethers";
import { badRequest } from "../errors";

/**
 * The investor proves control of a wallet by signing a Sign-In with Ethereum message (EIP-4361, sent through EIP-191
 * `personal_sign`). Everything the service stores from the submission is in the signed text: the e-mail in the
 * statement, the names and the country as `urn:kyc:` resources, the wallet as the message's address. Example:
 *
 *   127.0.0.1:3000 wants you to sign in with your Ethereum account:
 *   0x70997970C51812dc3A010C7d01b50e0d17dc79C8
 *
 *   Register this wallet for investor onboarding (KYC) as alice@example.com.
 *
 *   URI: http://127.0.0.1:3000/kyc
 *   Version: 1
 *   Chain ID: 11155111
 *   Nonce: 3yXq0aPZt9LmW2kQe
 *   Issued At: 2025-05-01T10:00:00.000Z
 *   Expiration Time: 2025-05-01T10:10:00.000Z
 *   Resources:
 *   - urn:kyc:email:alice%40example.com
 *   - urn:kyc:first-name:Alice
 *   - urn:kyc:last-name:Liddell
 *   - urn:kyc:country:GB
 */

/** How long a message stays valid after it is issued (capped by the link's own expiry). */
export const MESSAGE_TTL_MS = 10 * 60_000;
/** Clock difference tolerated between the service and the investor's machine. */
const CLOCK_SKEW_MS = 60_000;

export interface SignInMessage {
  domain: string;
  address: string;
  statement: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: string;
  expirationTime: string;
  resources: string[];
}

/** What the submission claims; the signed message must carry exactly this. */
export interface SubmissionClaims {
  email: string;
  firstName: string;
  lastName: string;
  country: string;
}

/** The site the message is for: the authority and the page's URI of the service's base URL. */
export function siteOf(baseUrl: string): { domain: string; uri: string } {
  return { domain: new URL(baseUrl).host, uri: `${baseUrl.replace(/\/$/, "")}/kyc` };
}

export function onboardingStatement(email: string): string {
  return `Register this wallet for investor onboarding (KYC) as ${email}.`;
}

export function claimResources(c: SubmissionClaims): string[] {
  return [
    `urn:kyc:email:${encodeURIComponent(c.email)}`,
    `urn:kyc:first-name:${encodeURIComponent(c.firstName)}`,
    `urn:kyc:last-name:${encodeURIComponent(c.lastName)}`,
    `urn:kyc:country:${encodeURIComponent(c.country)}`,
  ];
}

export function renderMessage(m: SignInMessage): string {
  return [
    `${m.domain} wants you to sign in with your Ethereum account:`,
    m.address,
    "",
    m.statement,
    "",
    `URI: ${m.uri}`,
    "Version: 1",
    `Chain ID: ${m.chainId}`,
    `Nonce: ${m.nonce}`,
    `Issued At: ${m.issuedAt}`,
    `Expiration Time: ${m.expirationTime}`,
    "Resources:",
    ...m.resources.map((r) => `- ${r}`),
  ].join("\n");
}

/** The message the service asks the wallet to sign for one link. */
export function issueMessage(input: {
  baseUrl: string;
  address: string;
  chainId: number;
  nonce: string;
  claims: SubmissionClaims;
  linkExpiresAt: string;
  now?: number;
}): SignInMessage {
  const now = input.now ?? Date.now();
  const expires = Math.min(now + MESSAGE_TTL_MS, new Date(input.linkExpiresAt).getTime());
  return {
    ...siteOf(input.baseUrl),
    address: getAddress(input.address),
    statement: onboardingStatement(input.claims.email),
    chainId: input.chainId,
    nonce: input.nonce,
    issuedAt: new Date(now).toISOString(),
    expirationTime: new Date(expires).toISOString(),
    resources: claimResources(input.claims),
  };
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

/** Parses a message of exactly the layout renderMessage writes; undefined for anything else. */
export function parseMessage(text: string): SignInMessage | undefined {
  const lines = text.split("\n");
  const header = /^(\S+) wants you to sign in with your Ethereum account:$/.exec(lines[0] ?? "");
  if (!header || !/^0x[0-9a-fA-F]{40}$/.test(lines[1] ?? "") || lines[2] !== "" || !lines[3] || lines[4] !== "")
    return undefined;
  const field = (index: number, name: string) => {
    const line = lines[index] ?? "";
    return line.startsWith(`${name}: `) ? line.slice(name.length + 2) : undefined;
  };
  const uri = field(5, "URI");
  const version = field(6, "Version");
  const chainId = field(7, "Chain ID");
  const nonce = field(8, "Nonce");
  const issuedAt = field(9, "Issued At");
  const expirationTime = field(10, "Expiration Time");
  if (
    !uri ||
    version !== "1" ||
    !chainId ||
    !/^[1-9]\d{0,15}$/.test(chainId) ||
    !nonce ||
    !/^[A-Za-z0-9]{8,}$/.test(nonce)
  )
    return undefined;
  if (!issuedAt || !TIMESTAMP.test(issuedAt) || !expirationTime || !TIMESTAMP.test(expirationTime)) return undefined;
  if (lines[11] !== "Resources:") return undefined;
  const resources = lines.slice(12);
  if (!resources.length || resources.some((r) => !/^- \S+$/.test(r))) return undefined;
  let address: string;
  try {
    address = getAddress(lines[1]);
  } catch {
    return undefined; // a mixed-case address with a wrong checksum
  }
  return {
    domain: header[1],
    address,
    statement: lines[3],
    uri,
    chainId: Number(chainId),
    nonce,
    issuedAt,
    expirationTime,
    resources: resources.map((r) => r.slice(2)),
  };
}

/**
 * Checks a submitted message and signature against the link (its nonce), the site and the claims, and returns the
 * wallet the signature recovers to. Each refusal is a 400 naming the field at fault.
 */
export function verifyWalletProof(input: {
  message: string;
  signature: string;
  walletAddress: string;
  nonce: string;
  baseUrl: string;
  claims: SubmissionClaims;
  now?: number;
}): { address: string; message: SignInMessage } {
  const now = input.now ?? Date.now();
  const parsed = parseMessage(input.message);
  if (!parsed)
    throw badRequest("message is not a sign-in message (EIP-4361) issued by this service's page", { field: "message" });
  const site = siteOf(input.baseUrl);
  if (parsed.domain !== site.domain || parsed.uri !== site.uri) {
    throw badRequest(`message was issued for ${parsed.domain}, not for this service (${site.domain})`, {
      field: "message",
      domain: parsed.domain,
    });
  }
  if (parsed.nonce !== input.nonce)
    throw badRequest("message nonce is not this link's nonce: it was signed for another link", { field: "message" });
  const claimed = getAddress(input.walletAddress);
  if (parsed.address !== claimed) {
    throw badRequest(`message is for wallet ${parsed.address}, not for walletAddress ${claimed}`, {
      field: "walletAddress",
      messageAddress: parsed.address,
    });
  }
  if (parsed.statement !== onboardingStatement(input.claims.email)) {
    throw badRequest(`message statement is not the onboarding statement for ${input.claims.email}`, {
      field: "message",
    });
  }
  const expected = claimResources(input.claims);
  const names = ["email", "firstName", "lastName", "country"];
  if (parsed.resources.length !== expected.length)
    throw badRequest("message resources are not the submitted details", { field: "message" });
  for (const [i, resource] of expected.entries()) {
    if (parsed.resources[i] !== resource)
      throw badRequest(`the signed message does not carry the submitted ${names[i]}`, { field: names[i] });
  }
  const issuedAt = Date.parse(parsed.issuedAt);
  const expiresAt = Date.parse(parsed.expirationTime);
  if (issuedAt > now + CLOCK_SKEW_MS)
    throw badRequest(`message Issued At ${parsed.issuedAt} is in the future`, { field: "message" });
  if (expiresAt <= now)
    throw badRequest(`message expired at ${parsed.expirationTime}: sign a new one`, { field: "message" });
  if (expiresAt - issuedAt > MESSAGE_TTL_MS || expiresAt < issuedAt) {
    throw badRequest(`message must expire within ${MESSAGE_TTL_MS / 60_000} minutes of Issued At`, {
      field: "message",
    });
  }
  if (renderMessage(parsed) !== input.message)
    throw badRequest("message is not in this service's canonical form", { field: "message" });

  let recovered: string;
  try {
    recovered = verifyMessage(input.message, input.signature);
  } catch {
    throw badRequest("signature is not a valid wallet signature", { field: "signature" });
  }
  if (recovered !== claimed) {
    throw badRequest(`signature was made by ${recovered}, not by walletAddress ${claimed}`, {
      field: "signature",
      signer: recovered,
    });
  }
  return { address: recovered, message: parsed };
}
