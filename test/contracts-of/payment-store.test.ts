import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { FakePaymentStores, NO_SQL } from "../fakes/payment-stores";
import { databasePaymentStores, describePaymentStoreContract } from "./payment-store";

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
  return databasePaymentStores(db, () => db.close());
});
