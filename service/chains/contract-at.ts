import { Contract, type ContractRunner, type Interface } from "ethers";

/** A typechain factory: what `contractAt` needs of it. */
interface ContractFactory<C> {
  createInterface(): Interface;
  connect(address: string, runner?: ContractRunner | null): C;
}

const interfaces = new WeakMap<object, Interface>();

/**
 * `factory.connect(address, runner)` without parsing the ABI again: typechain's connect builds a new Interface from
 * the ABI on every call (over a millisecond of CPU for a large contract, on every read); this parses it once per
 * contract type and shares it.
 */
export function contractAt<C>(factory: ContractFactory<C>, address: string, runner: ContractRunner): C {
  let iface = interfaces.get(factory);
  if (!iface) interfaces.set(factory, (iface = factory.createInterface()));
  return new Contract(address, iface, runner) as unknown as C;
}
