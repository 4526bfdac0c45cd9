/** The console's page renderers, loaded on the first page asked for. */
export { auditPage } from "../console/pages/audit";
export { keysPage } from "../console/pages/keys";
export { kycPage } from "../console/pages/kyc";
export { overviewPage } from "../console/pages/overview";
export { paymentPage, paymentsPage } from "../console/pages/payments";
export { refundsPage } from "../console/pages/refunds";
export { accountPage, signInPage } from "../console/pages/sign-in";
export { transactionPage } from "../console/pages/transaction";
export { transactionsPage } from "../console/pages/transactions";
export { webhookPage } from "../console/pages/webhook";
export { webhooksPage } from "../console/pages/webhooks";
