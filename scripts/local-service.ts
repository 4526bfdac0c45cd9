import { serveUntilSignalled } from "../service/process";

/**
 * The service as a process of its own with the local sandbox's posture (development defaults: secrets generated into
 * DATA_DIR, webhooks to local receivers, /metrics public, migrations at start): what the test helpers and the sandbox
 * scripts start. Never part of the build: a server runs dist/service/main.js, which is always production.
 */
serveUntilSignalled(process.env, "local");
