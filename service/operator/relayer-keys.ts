import { getAddress, isAddress } from "ethers";
import { decisive } from "../engine/relayer-keys";
import { badRequest, conflict, notFound } from "../errors";
import { openKeySource, type KeySource } from "../signers/key-sources";
import {
  PREPARED_HOLD_MINUTES,
  type RelayerKeyRecord,
  type RelayerKeys,
  type RelayerKeyState,
} from "../store/relayer-keys";

export type RelayerKeyCommand =
  | { command: "relayer-keys.list" }
  | { command: "relayer-keys.add"; source: KeySource; chainId?: number }
  | { command: "relayer-keys.drain"; address: string; chainId?: number }
  | { command: "relayer-keys.remove"; address: string; chainId?: number };

/** What relayer key commands check against, from the configuration of the service (or of the admin tool, the same one). */
export interface RelayerKeysContext {
  /** Per chain with a relayer: the addresses of the configuration's relayer keys (RELAYER_PRIVATE_KEY first). */
  configured: Map<number, string[]>;
  /** The settlement wallet's address: never a relayer key too (their nonces would clash). */
  settlement?: string;
  /** How the running service holds a key now (starting, active, draining), when the command runs through it. */
  standing?: (chainId: number, address: string) => string | undefined;
}

/** A key's place on one chain: its state and where it comes from. */
interface KeyOnChain {
  address: string;
  state: Exclude<RelayerKeyState, "removed">;
  origin: "configuration" | KeySource["kind"];
}

/**
 * `relayer-keys list|add|drain|remove`: relayer keys rotated on a running service. The decision is stored
 * and every instance follows it within seconds (engine/relayer-key-rotation.ts): a key added
 * takes new operations once set up; a drained key takes none but finishes its own; a key is removed only once drained
 * and without work left.
 */
export async function runRelayerKeyCommand(
  store: RelayerKeys,
  cmd: RelayerKeyCommand,
  context: RelayerKeysContext,
): Promise<unknown> {
  const records = await store.list();
  switch (cmd.command) {
    case "relayer-keys.list":
      return listKeys(store, records, context);
    case "relayer-keys.add":
      return addKey(store, records, context, cmd.source, cmd.chainId);
    case "relayer-keys.drain":
    case "relayer-keys.remove": {
      if (!isAddress(cmd.address ?? ""))
        throw badRequest("address must be a 0x-prefixed 20-byte hex address", { field: "address" });
      const address = getAddress(cmd.address.toLowerCase());
      const chains = chainsOf(context, cmd.chainId);
      const states = chains.map(
        (chainId) => keysOn(chainId, records, context).find((k) => k.address === address)?.state,
      );
      if (cmd.command === "relayer-keys.drain")
        return drainKey(store, records, context, address, chains, states, cmd.chainId);
      return removeKey(store, address, chains, states, cmd.chainId);
    }
  }
}

async function listKeys(store: RelayerKeys, records: RelayerKeyRecord[], context: RelayerKeysContext) {
  const rows = [];
  for (const chainId of context.configured.keys()) {
    for (const key of keysOn(chainId, records, context)) {
      const here = context.standing?.(chainId, key.address);
      rows.push({ chainId, ...key, ...(here ? { here } : {}), ...(await store.work(chainId, key.address)) });
    }
  }
  return rows;
}

async function addKey(
  store: RelayerKeys,
  records: RelayerKeyRecord[],
  context: RelayerKeysContext,
  source: KeySource,
  chainId?: number,
) {
  const chains = chainsOf(context, chainId);
  let address: string;
  try {
    const signer = openKeySource(source);
    address = signer.address;
    await signer.close();
  } catch (error) {
    throw badRequest(`the key cannot be opened: ${(error as Error).message}`, {
      field: source.kind === "pkcs11" ? "pkcs11" : "keystore",
    });
  }
  if (context.settlement && context.settlement.toLowerCase() === address.toLowerCase()) {
    throw conflict(
      `${address} is the settlement wallet: a relayer key needs a key of its own (their nonces would clash)`,
      { address },
    );
  }
  const taken = chains.filter((id) => keysOn(id, records, context).some((k) => k.address === address));
  if (taken.length) throw conflict(`${address} is already a relayer key on chain ${taken.join(", ")}`, { address });
  await store.add(chainId ?? 0, address, source);
  return {
    address,
    chainId: chainId ?? "every chain",
    state: "active",
    origin: source.kind,
    note: "each instance takes it up within seconds, once its nonces are synced and its delegation made",
  };
}

async function drainKey(
  store: RelayerKeys,
  records: RelayerKeyRecord[],
  context: RelayerKeysContext,
  address: string,
  chains: number[],
  states: (string | undefined)[],
  chainId?: number,
) {
  if (!states.some((s) => s === "active"))
    throw notFound(`${address} is not an active relayer key on chain ${chains.join(", ")}`, { address });
  const alone = chains.filter(
    (id) => !keysOn(id, records, context).some((k) => k.state === "active" && k.address !== address),
  );
  if (alone.length)
    throw conflict(
      `${address} is the only active relayer key on chain ${alone.join(", ")}: add another first (relayer-keys add)`,
      { address },
    );
  await store.setState(chainId ?? 0, address, "draining");
  return {
    address,
    chainId: chainId ?? "every chain",
    state: "draining",
    ...(await store.work(chainId ?? 0, address)),
  };
}

async function removeKey(
  store: RelayerKeys,
  address: string,
  chains: number[],
  states: (string | undefined)[],
  chainId?: number,
) {
  if (states.every((s) => s === undefined))
    throw notFound(`${address} is not a relayer key on chain ${chains.join(", ")}`, { address });
  if (states.some((s) => s === "active"))
    throw conflict(`${address} still takes new operations: drain it first (relayer-keys drain ${address})`, {
      address,
    });
  const work = await store.work(chainId ?? 0, address);
  if (work.sending || work.prepared) {
    throw conflict(
      `${address} still has work: ${work.sending} batch(es) being sent and ${work.prepared} prepared in the last ${PREPARED_HOLD_MINUTES} minutes and not sent; remove it once they are done`,
      { address, ...work },
    );
  }
  await store.setState(chainId ?? 0, address, "removed");
  return { address, chainId: chainId ?? "every chain", state: "removed" };
}

/** The chains a command acts on: `chainId` (which must have a relayer), else every chain with one. */
function chainsOf(context: RelayerKeysContext, chainId?: number): number[] {
  const served = [...context.configured.keys()];
  if (!served.length)
    throw badRequest(
      "this service has no relayer: configure its first key (RELAYER_PRIVATE_KEY, RELAYER_KEYSTORE or RELAYER_PKCS11_*) and an RPC URL per chain",
      { field: "chainId" },
    );
  if (chainId === undefined || chainId === 0) return served;
  if (!context.configured.has(chainId))
    throw badRequest(`chain ${chainId} has no relayer in this service; chains with one: ${served.join(", ")}`, {
      field: "chainId",
    });
  return [chainId];
}

/** The relayer's keys on `chainId` as the records leave them: the configuration's, less those removed, with those added. */
function keysOn(chainId: number, records: RelayerKeyRecord[], context: RelayerKeysContext): KeyOnChain[] {
  const keys = new Map<string, KeyOnChain>(
    (context.configured.get(chainId) ?? []).map((a) => [
      a.toLowerCase(),
      { address: getAddress(a), state: "active", origin: "configuration" },
    ]),
  );
  for (const record of decisive(records, chainId)) {
    const id = record.address.toLowerCase();
    if (record.state === "removed") keys.delete(id);
    else if (keys.has(id)) keys.get(id)!.state = record.state;
    else if (record.source) keys.set(id, { address: record.address, state: record.state, origin: record.source.kind });
  }
  return [...keys.values()];
}
