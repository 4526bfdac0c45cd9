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
export function siteOf(baseUrl: string, page = "/kyc"): { domain: string; uri: string } {
  return { domain: new URL(baseUrl).host, uri: `${baseUrl.replace(/\/$/, "")}${page}` };
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

/** One line of a message's Resources the verifier requires, and the request field to name when it is not there. */
export interface RequiredResource {
  value: string;
  field: string;
  what: string;
}

/**
 * Checks a signed message of this service (EIP-4361 layout, EIP-191 signature) and returns the wallet the signature
 * recovers to: the site and page it was issued for, its nonce when one is expected, the wallet, its statement and
 * resources, a validity window of at most MESSAGE_TTL_MS, the canonical form, and the signature. Each refusal is a 400
 * naming the field at fault.
 */
export function verifySignedMessage(input: {
  message: string;
  signature: string;
  walletAddress: string;
  baseUrl: string;
  /** The page the message is for (its URI's path). */
  page: string;
  statement: string;
  /** What the statement is, for the refusal ("the onboarding statement for alice@example.com"). */
  statementName: string;
  resources: RequiredResource[];
  /** The nonce the message must carry (a link's); absent: any nonce of the layout. */
  nonce?: string;
  /** The chain the message must name; absent: any. */
  chainId?: number;
  messageField?: string;
  walletField?: string;
  signatureField?: string;
  now?: number;
}): { address: string; message: SignInMessage } {
  const messageField = input.messageField ?? "message";
  const walletField = input.walletField ?? "walletAddress";
  const signatureField = input.signatureField ?? "signature";
  const now = input.now ?? Date.now();
  const parsed = parseMessage(input.message);
  if (!parsed) {
    throw badRequest(`${messageField} is not a sign-in message (EIP-4361) in the layout this service issues`, {
      field: messageField,
    });
  }
  const site = siteOf(input.baseUrl, input.page);
  if (parsed.domain !== site.domain || parsed.uri !== site.uri) {
    throw badRequest(
      `${messageField} was issued for ${parsed.domain}${new URL(parsed.uri, "http://x").pathname}, not for ${site.uri}`,
      {
        field: messageField,
        domain: parsed.domain,
      },
    );
  }
  if (input.nonce !== undefined && parsed.nonce !== input.nonce)
    throw badRequest(`${messageField} nonce is not this link's nonce: it was signed for another link`, {
      field: messageField,
    });
  if (input.chainId !== undefined && parsed.chainId !== input.chainId)
    throw badRequest(`${messageField} is for chain ${parsed.chainId}, not chain ${input.chainId}`, {
      field: messageField,
    });
  const claimed = getAddress(input.walletAddress);
  if (parsed.address !== claimed) {
    throw badRequest(`${messageField} is for wallet ${parsed.address}, not for ${walletField} ${claimed}`, {
      field: walletField,
      messageAddress: parsed.address,
    });
  }
  if (parsed.statement !== input.statement) {
    throw badRequest(`${messageField} statement is not ${input.statementName}`, { field: messageField });
  }
  if (parsed.resources.length !== input.resources.length)
    throw badRequest(`${messageField} resources are not the ones requested`, { field: messageField });
  for (const [i, resource] of input.resources.entries()) {
    if (parsed.resources[i] !== resource.value)
      throw badRequest(`the signed message does not carry the ${resource.what}`, { field: resource.field });
  }
  checkValidity(parsed, input.message, messageField, now);
  return {
    address: recoverSigner(input.message, input.signature, claimed, signatureField, walletField),
    message: parsed,
  };
}

/** A validity window of at most MESSAGE_TTL_MS around now, and the canonical form. */
function checkValidity(parsed: SignInMessage, message: string, messageField: string, now: number): void {
  const issuedAt = Date.parse(parsed.issuedAt);
  const expiresAt = Date.parse(parsed.expirationTime);
  if (issuedAt > now + CLOCK_SKEW_MS)
    throw badRequest(`${messageField} Issued At ${parsed.issuedAt} is in the future`, { field: messageField });
  if (expiresAt <= now)
    throw badRequest(`${messageField} expired at ${parsed.expirationTime}: sign a new one`, { field: messageField });
  if (expiresAt - issuedAt > MESSAGE_TTL_MS || expiresAt < issuedAt) {
    throw badRequest(`${messageField} must expire within ${MESSAGE_TTL_MS / 60_000} minutes of Issued At`, {
      field: messageField,
    });
  }
  if (renderMessage(parsed) !== message)
    throw badRequest(`${messageField} is not in this service's canonical form`, { field: messageField });
}

/** The wallet the signature recovers to, which must be the claimed one. */
function recoverSigner(
  message: string,
  signature: string,
  claimed: string,
  signatureField: string,
  walletField: string,
): string {
  let recovered: string;
  try {
    recovered = verifyMessage(message, signature);
  } catch {
    throw badRequest(`${signatureField} is not a valid wallet signature`, { field: signatureField });
  }
  if (recovered !== claimed) {
    throw badRequest(`${signatureField} was made by ${recovered}, not by ${walletField} ${claimed}`, {
      field: signatureField,
      signer: recovered,
    });
  }
  return recovered;
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
  const names = ["email", "firstName", "lastName", "country"];
  const what = ["submitted email", "submitted firstName", "submitted lastName", "submitted country"];
  return verifySignedMessage({
    ...input,
    page: "/kyc",
    statement: onboardingStatement(input.claims.email),
    statementName: `the onboarding statement for ${input.claims.email}`,
    resources: claimResources(input.claims).map((value, i) => ({ value, field: names[i], what: what[i] })),
  });
}
