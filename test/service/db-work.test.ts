import { expect } from "chai";
import { Worker } from "node:worker_threads";
import { BACKGROUND_WORK, DbWork, timedSyncTrip } from "../../service/store/db-work";

/**
 * A trip's CPU figure is the service thread's own (the embedded engine runs on it), not the whole process's: CPU that
 * another thread burns meanwhile (a worker, the garbage collector's helpers) is not the database's.
 */
describe("database work: a trip's CPU time is the thread's own", function () {
  this.timeout(20_000);

  it("a worker spinning on another thread during a trip adds nothing to the trip's CPU", async () => {
    const spinner = new Worker("const end = Date.now() + 1500; while (Date.now() < end);", { eval: true });
    try {
      await new Promise((resolve) => spinner.once("online", resolve));
      const work = new DbWork();
      timedSyncTrip(work, 1, () => {
        for (const end = performance.now() + 300; performance.now() < end;);
      });
      const figures = work.snapshot()[BACKGROUND_WORK];
      expect(figures.trips).to.equal(1);
      expect(figures.ms).to.be.at.least(300);
      // The whole process's CPU would be about twice the trip's on two cores: the worker's spin counted with it.
      expect(figures.cpuMs).to.be.within(100, 450);
    } finally {
      await spinner.terminate();
    }
  });
});
