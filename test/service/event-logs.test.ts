import { expect } from "chai";
import { getAddress, id, type Interface, type LogDescription, type ParamType } from "ethers";
import * as contracts from "../../service/chains/contracts";
import { parseEventLog } from "../../service/chains/contracts";

/** Every contract interface the service decodes logs with. */
const interfaces = Object.entries(contracts).filter((entry): entry is [string, Interface] =>
  entry[0].endsWith("Interface"),
);

/** A value of an ABI type, varied by `seed`. */
function sample(param: ParamType, seed: number): unknown {
  if (param.baseType === "array") {
    const length = param.arrayLength !== null && param.arrayLength >= 0 ? param.arrayLength : 2;
    return Array.from({ length }, (_, k) => sample(param.arrayChildren!, seed + k));
  }
  if (param.baseType === "tuple") return param.components!.map((component, k) => sample(component, seed + k));
  if (param.type === "address") return getAddress("0x" + (seed + 1).toString(16).padStart(40, "7"));
  if (param.type === "bool") return seed % 2 === 0;
  if (param.type === "string") return `text ${seed}`;
  if (param.type === "bytes") return "0x" + "ab".repeat((seed % 5) + 1);
  if (param.type.startsWith("bytes"))
    return (
      "0x" +
      (seed % 256)
        .toString(16)
        .padStart(2, "0")
        .repeat(Number(param.type.slice(5)))
    );
  if (param.type.startsWith("uint")) return (BigInt(seed) * 1_000n + 7n) % 2n ** BigInt(param.type.slice(4) || 256);
  if (param.type.startsWith("int"))
    return -((BigInt(seed) + 3n) % 2n ** BigInt(Number(param.type.slice(3) || 256) - 1));
  throw new Error(`no sample for ${param.type}`);
}

/** What a decoded log says, comparable with deep equality (indexed dynamic values are their hashes). */
const comparable = (log: LogDescription | null) =>
  log && {
    name: log.name,
    signature: log.signature,
    topic: log.topic,
    args: JSON.stringify(log.args, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
  };

describe("parseEventLog: Interface.parseLog with the topics computed once", () => {
  it("decodes every event of every interface exactly as parseLog does", () => {
    let events = 0;
    for (const [name, iface] of interfaces) {
      iface.forEachEvent((event, index) => {
        const log = iface.encodeEventLog(
          event,
          event.inputs.map((input, k) => sample(input, index * 10 + k)),
        );
        expect(comparable(parseEventLog(iface, log)), `${name} ${event.format()}`).to.deep.equal(
          comparable(iface.parseLog(log)),
        );
        events++;
      });
    }
    expect(events).to.be.greaterThan(40);
  });

  it("answers null for a log none of the interface's events has, and for a log with no topics", () => {
    const [, iface] = interfaces[0];
    const foreign = { topics: [id("NotAnEvent(uint256)")], data: "0x" };
    expect(parseEventLog(iface, foreign)).to.equal(null);
    expect(iface.parseLog(foreign)).to.equal(null);
    expect(parseEventLog(iface, { topics: [], data: "0x" })).to.equal(null);
  });

  it("throws, as parseLog does, on a known topic whose data does not decode", () => {
    const iface = contracts.securityTokenInterface;
    const log = iface.encodeEventLog("Transfer", [
      getAddress("0x" + "11".repeat(20)),
      getAddress("0x" + "22".repeat(20)),
      5n,
    ]);
    const truncated = { ...log, data: "0x1234" };
    expect(() => iface.parseLog(truncated)).to.throw();
    expect(() => parseEventLog(iface, truncated)).to.throw();
  });
});
