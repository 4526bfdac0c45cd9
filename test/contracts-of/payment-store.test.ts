import { Sealer } from "../../service/crypto/sealed";
import { Batches } from "../../service/store/batches";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { PaymentRefunds } from "../../service/store/payment-refunds";
import { Payments } from "../../service/store/payments";
import { FakePaymentStores, NO_SQL } from "../fakes/payment-stores";
import { describePaymentStoreContract } from "./payment-store";

describePaymentStoreContract("in-memory fake", () => {
  const fake = new FakePaymentStores();
  return Promise.resolve({
    payments: fake.payments,
    refunds: fake.refunds,
    q: NO_SQL,
    batch: (txId, status) => Promise.resolve(void fake.batches.set(txId, status)),
    events: (txId) => Promise.resolve(fake.events.filter((e) => e.txId === txId).map((e) => e.type)),
    backdate: (id, ms) => Promise.resolve(fake.payments.backdate(id, ms)),
    close: () => Promise.resolve(),
  });
});

describePaymentStoreContract("embedded database (PGlite)", async () => {
  const db = await openDb({});
  await migrate(db);
  const sealer = new Sealer("s".repeat(64));
  const batches = new Batches(db, sealer);
  return {
    payments: new Payments(db, sealer),
    refunds: new PaymentRefunds(db, sealer),
    q: db,
    async batch(txId, status) {
      await batches.create({
        txId,
        chainId: 84532,
        method: "whitelist",
        executionMode: "service-relayed",
        signer: "0x" + "1".repeat(40),
        apiKeyId: null,
        body: {},
        plan: {},
        info: {},
        transactions: [],
      });
      if (status === "rejected") await db.query("UPDATE batches SET status = 'rejected' WHERE tx_id = $1", [txId]);
    },
    events: async (txId) =>
      (
        await db.query<{ type: string }>(
          "SELECT type FROM events WHERE tx_id = $1 AND type LIKE 'payment.%' ORDER BY id",
          [txId],
        )
      ).map((r) => r.type),
    backdate: async (id, ms) => {
      await db.query(
        "UPDATE payments SET updated_at = now() - make_interval(secs => $2::float8 / 1000) WHERE id = $1",
        [id, ms],
      );
    },
    close: () => db.close(),
  };
});
