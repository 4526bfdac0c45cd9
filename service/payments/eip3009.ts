import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import {
  concat,
  type Interface,
  keccak256,
  Signature,
  toUtf8Bytes,
  type TransactionReceipt,
  TypedDataEncoder,
  zeroPadValue,
} from "ethers";
import type { Chain } from "../chains/registry";
import { isChainUnavailable, latestFirst } from "../chains/rpc-errors";
import { encodeAbi, encodeCall, type AbiValue } from "../chains/abi-words";
import { usdcInterface } from "../chains/contracts";
import { checksumAddress } from "../crypto/checksum-address";
import { recoverSigner } from "../crypto/secp256k1";

/** The magic suffix of an ERC-6492 signature (a wallet not deployed yet): only the library's facilitator handles it. */
const ERC6492_SUFFIX = "6492649264926492649264926492649264926492649264926492649264926492";

/**
 * The calldata of `transferWithAuthorization` for an x402 `exact` EVM payload: the (v, r, s) form for a 65-byte
 * signature, the `bytes signature` form (FiatToken v2.2, ERC-1271 wallets) otherwise; undefined for an ERC-6492
 * signature or a payload without an authorization.
 */
export function transferWithAuthorizationCalldata(payload: PaymentPayload): string | undefined {
  const inner = payload?.payload as { signature?: string; authorization?: Record<string, string> } | undefined;
  const a = inner?.authorization;
  const signature = inner?.signature;
  if (
    !a ||
    typeof signature !== "string" ||
    !/^0x([0-9a-fA-F]{2})+$/.test(signature) ||
    signature.toLowerCase().endsWith(ERC6492_SUFFIX)
  )
    return undefined;
  const head: AbiValue[] = [
    { address: a.from },
    { address: a.to },
    { uint: BigInt(a.value) },
    { uint: BigInt(a.validAfter) },
    { uint: BigInt(a.validBefore) },
    { bytes32: a.nonce },
  ];
  if (signature.length === 132) {
    const { v, r, s } = Signature.from(signature);
    return encodeCall(TRANSFER_WITH_VRS, [...head, { uint: BigInt(v) }, { bytes32: r }, { bytes32: s }]);
  }
  return encodeCall(TRANSFER_WITH_BYTES, [...head, { bytes: signature }]);
}

const TRANSFER_WITH_VRS = usdcInterface.getFunction(
  "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
).selector;
const TRANSFER_WITH_BYTES = usdcInterface.getFunction(
  "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
).selector;

/** The `invalidReason`s of x402's EVM `exact` facilitator (@x402/evm), given as it gives them. */
const INVALID = {
  scheme: "invalid_exact_evm_scheme",
  network: "invalid_exact_evm_network_mismatch",
  domain: "invalid_exact_evm_missing_eip712_domain",
  signature: "invalid_exact_evm_signature",
  recipient: "invalid_exact_evm_recipient_mismatch",
  validBefore: "invalid_exact_evm_payload_authorization_valid_before",
  validAfter: "invalid_exact_evm_payload_authorization_valid_after",
  value: "invalid_exact_evm_payload_authorization_value_mismatch",
  notEip3009: "invalid_exact_evm_eip3009_not_supported",
  nonceUsed: "invalid_exact_evm_nonce_already_used",
  tokenName: "invalid_exact_evm_token_name_mismatch",
  tokenVersion: "invalid_exact_evm_token_version_mismatch",
  balance: "invalid_exact_evm_insufficient_balance",
  simulation: "invalid_exact_evm_transaction_simulation_failed",
} as const;

/** An authorization that lasts less than this many seconds more is refused (as the library refuses it). */
const VALID_BEFORE_MARGIN_S = 6;

const TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
  toUtf8Bytes(
    "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)",
  ),
);

/**
 * A 0x-prefixed 20-byte hex address whose mixed case, if any, is its EIP-55 checksum (checksumAddress throws
 * otherwise; it remembers the answer, which the calldata's encoding asks for again).
 */
function isAddress(value: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return false;
  try {
    checksumAddress(value);
    return true;
  } catch {
    return false;
  }
}
const UINT256 = /^[0-9]{1,78}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE_65 = /^0x[0-9a-fA-F]{130}$/;

interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** EIP-712 domain separators by token, name, version and chain (a handful per process). */
const domainSeparators = new Map<string, string>();
function domainSeparator(name: string, version: string, chainId: number, verifyingContract: string): string {
  const key = `${chainId}:${verifyingContract.toLowerCase()}:${name}:${version}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    separator = TypedDataEncoder.hashDomain({ name, version, chainId, verifyingContract });
    domainSeparators.set(key, separator);
  }
  return separator;
}

/** The EIP-712 digest the payer signed: TransferWithAuthorization over the token's domain. */
export function transferAuthorizationDigest(
  domain: { name: string; version: string; chainId: number; verifyingContract: string },
  a: Authorization,
): string {
  const struct = keccak256(
    "0x" +
      encodeAbi([
        { bytes32: TRANSFER_WITH_AUTHORIZATION_TYPEHASH },
        { address: a.from },
        { address: a.to },
        { uint: BigInt(a.value) },
        { uint: BigInt(a.validAfter) },
        { uint: BigInt(a.validBefore) },
        { bytes32: a.nonce },
      ]),
  );
  return keccak256(
    concat(["0x1901", domainSeparator(domain.name, domain.version, domain.chainId, domain.verifyingContract), struct]),
  );
}

/** The payment's EIP-3009 authorization when it has the one form this module checks itself, else undefined. */
function plainAuthorization(payload: PaymentPayload): { authorization: Authorization; signature: string } | undefined {
  const inner = payload?.payload as { signature?: unknown; authorization?: Record<string, unknown> } | undefined;
  const a = inner?.authorization;
  const signature = inner?.signature;
  if (!a || typeof signature !== "string" || !SIGNATURE_65.test(signature)) return undefined;
  const fields = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce];
  if (!fields.every((f) => typeof f === "string")) return undefined;
  const authorization = a as unknown as Authorization;
  // A mixed-case address with a wrong checksum is left to the library (it refuses it as a bad signature).
  if (!isAddress(authorization.from) || !isAddress(authorization.to) || !BYTES32.test(authorization.nonce))
    return undefined;
  if (
    ![authorization.value, authorization.validAfter, authorization.validBefore].every(
      (n) => UINT256.test(n) && BigInt(n) < 2n ** 256n,
    )
  )
    return undefined;
  return { authorization, signature };
}

/**
 * x402's `exact` verification of an EIP-3009 payment signed by a plain account (no code at the payer, a 65-byte
 * signature), in the order and with the reasons of the official facilitator (@x402/evm), which needs ~2 ms of pure
 * JavaScript per payment to recover the signer (viem's secp256k1): here it is recovered natively
 * (crypto/secp256k1.ts), and the transfer is simulated as the library simulates it (eth_call; on the latest block first, see below).
 * Undefined for every other payment (a smart wallet, ERC-6492, Permit2, an unusual encoding): the library verifies
 * those. The payment asset was checked to be a contract with EIP-3009 when x402 started (payments/payment-terms.ts).
 */
export async function verifyPlainTransferAuthorization(
  chain: Chain,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<VerifyResponse | undefined> {
  const plain = plainAuthorization(payload);
  if (!plain || !isAddress(requirements.asset) || !isAddress(requirements.payTo)) return undefined;
  const { authorization: a, signature } = plain;
  const payer = a.from;
  const invalid = (invalidReason: string): VerifyResponse => ({ isValid: false, invalidReason, payer });
  if (payload.accepted?.scheme !== "exact" || requirements.scheme !== "exact") return invalid(INVALID.scheme);
  const extra = requirements.extra as { name?: unknown; version?: unknown } | undefined;
  if (typeof extra?.name !== "string" || typeof extra.version !== "string" || !extra.name || !extra.version)
    return invalid(INVALID.domain);
  if (payload.accepted.network !== requirements.network) return invalid(INVALID.network);
  const chainId = Number(/^eip155:(\d+)$/.exec(requirements.network)?.[1]);
  if (chainId !== chain.chainId) return undefined;
  const asset = checksumAddress(requirements.asset);
  const refusal = offChainRefusal(
    { name: extra.name, version: extra.version, chainId, verifyingContract: asset },
    a,
    signature,
    requirements,
  );

  // Two questions for the chain, asked together (one JSON-RPC batch): does the payer have code, and does the transfer
  // go through? The transfer is asked about on the latest block, and on the pending one only when it fails there (an
  // idle local chain's latest block may predate validAfter; chains/rpc-errors.ts latestFirst), and only when nothing
  // off-chain refuses it. Raw JSON-RPC: ethers' getCode and call re-checksum each address.
  const code: Promise<string> = chain.provider.send("eth_getCode", [payer.toLowerCase(), "latest"]);
  const transferOn = (block: "latest" | "pending") =>
    chain.provider.send("eth_call", [
      { to: asset.toLowerCase(), data: transferWithAuthorizationCalldata(payload)! },
      block,
    ]) as Promise<unknown>;
  const simulation: Promise<{ ok: boolean } | { unavailable: unknown }> | undefined = refusal
    ? undefined
    : latestFirst(
        () => transferOn("latest"),
        () => transferOn("pending"),
      ).then(
        () => ({ ok: true }),
        (error: unknown) => (isChainUnavailable(error) ? { unavailable: error } : { ok: false }),
      );
  // A wallet with code (a smart account, an EIP-7702 delegation) answers for its signature itself (ERC-1271): the
  // library verifies it, whatever the rest says.
  if ((await code) !== "0x") return undefined;
  if (refusal) return invalid(refusal);
  // Only the chain's answer is a verdict: a chain that could not be asked throws (the caller answers 503, nothing charged).
  const simulated = await simulation!;
  if ("unavailable" in simulated) throw simulated.unavailable;
  if (simulated.ok) return { isValid: true, invalidReason: undefined, payer };
  return invalid(await whySimulationFailed(chain, asset, a, extra.name, extra.version, requirements.amount));
}

/** The first reason, in the library's order, to refuse an authorization that needs no chain to see: signer, recipient, time, value. */
function offChainRefusal(
  domain: { name: string; version: string; chainId: number; verifyingContract: string },
  a: Authorization,
  signature: string,
  requirements: PaymentRequirements,
): string | undefined {
  const digest = transferAuthorizationDigest(domain, a);
  let signer: string | undefined;
  try {
    signer = recoverSigner(digest, signature);
  } catch {
    signer = undefined;
  }
  if (!signer || signer !== checksumAddress(a.from)) return INVALID.signature;
  if (checksumAddress(a.to) !== checksumAddress(requirements.payTo)) return INVALID.recipient;
  const now = Math.floor(Date.now() / 1000);
  if (BigInt(a.validBefore) < BigInt(now + VALID_BEFORE_MARGIN_S)) return INVALID.validBefore;
  if (BigInt(a.validAfter) > BigInt(now)) return INVALID.validAfter;
  if (BigInt(a.value) !== BigInt(requirements.amount)) return INVALID.value;
  return undefined;
}

/** The payment token's functions, looked up by name (the typed interface only takes literal names). */
const token: Interface = usdcInterface;

/** The library's diagnosis of a transfer that would not go through: the first of these that explains it. */
async function whySimulationFailed(
  chain: Chain,
  asset: string,
  a: Authorization,
  name: string,
  version: string,
  amount: string,
): Promise<string> {
  // A call that reverts, or answers something that does not decode, is a failed read; a chain that could not be
  // asked is no reason at all (thrown).
  const read = async (fn: string, args: unknown[] = []) => {
    try {
      const data = await chain.provider.call({
        to: asset,
        data: token.encodeFunctionData(fn, args),
        blockTag: "pending",
      });
      return { ok: true as const, value: token.decodeFunctionResult(fn, data)[0] as unknown };
    } catch (error) {
      if (isChainUnavailable(error)) throw error;
      return { ok: false as const, value: undefined };
    }
  };
  const [balance, tokenName, tokenVersion, used] = await Promise.all([
    read("balanceOf", [a.from]),
    read("name"),
    read("version"),
    read("authorizationState", [a.from, a.nonce]),
  ]);
  if (!used.ok) return INVALID.notEip3009;
  if (used.value === true) return INVALID.nonceUsed;
  if (tokenName.ok && tokenName.value !== name) return INVALID.tokenName;
  if (tokenVersion.ok && tokenVersion.value !== version) return INVALID.tokenVersion;
  if (balance.ok && (balance.value as bigint) < BigInt(amount)) return INVALID.balance;
  return INVALID.simulation;
}

/** What a receipt is checked against: the payment's authorization and the transfer it pays. */
export interface AuthorizedTransfer {
  asset: string;
  payer: string;
  payTo: string;
  amount: string;
  authorizationNonce: string;
}

/**
 * As the facilitator requires of its own settlement: `receipt` shows the payer's authorization used and the transfer
 * it paid (amount to payTo), both logged by the payment's asset. A transaction that settles several payments (or
 * carries the payment with its operation) is read per payment this way: its status alone says nothing of each.
 */
export function paidIn(receipt: Pick<TransactionReceipt, "logs">, payment: AuthorizedTransfer): boolean {
  const ofAsset = receipt.logs.filter((log) => log.address.toLowerCase() === payment.asset.toLowerCase());
  const word = (address: string) => zeroPadValue(address, 32).toLowerCase();
  return (
    ofAsset.some(
      (log) =>
        log.topics[0] === AUTHORIZATION_USED_TOPIC &&
        log.topics[1]?.toLowerCase() === word(payment.payer) &&
        log.topics[2]?.toLowerCase() === payment.authorizationNonce.toLowerCase(),
    ) &&
    ofAsset.some(
      (log) =>
        log.topics[0] === TRANSFER_TOPIC &&
        log.topics[1]?.toLowerCase() === word(payment.payer) &&
        log.topics[2]?.toLowerCase() === word(payment.payTo) &&
        BigInt(log.data) === BigInt(payment.amount),
    )
  );
}

/** The settlement `receipt` is for `payment` (mined, and paidIn it), as PAYMENT-RESPONSE carries it. */
export function settledBy(
  receipt: Pick<TransactionReceipt, "hash">,
  payment: { network: string; payer: string },
): SettleResponse {
  return {
    success: true,
    transaction: receipt.hash,
    network: payment.network as SettleResponse["network"],
    payer: checksumAddress(payment.payer),
  };
}

/** AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce) of EIP-3009. */
const AUTHORIZATION_USED_TOPIC = usdcInterface.getEvent("AuthorizationUsed").topicHash;
/** Transfer(address indexed from, address indexed to, uint256 value) of the payment asset. */
const TRANSFER_TOPIC = usdcInterface.getEvent("Transfer").topicHash;
