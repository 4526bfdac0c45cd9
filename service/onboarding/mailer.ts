import type nodemailer from "nodemailer";
import type { Config } from "../config";
import { escapeHtml } from "./page";

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends e-mail; `messageId` is the Message-ID the SMTP server accepted. */
export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * The SMTP mailer (nodemailer) when SMTP_URL is configured; undefined otherwise (the issuer delivers links itself).
 * nodemailer is loaded with the first mail, not at start (most instances send none for a long while).
 */
export function createMailer(config: Pick<Config, "SMTP_URL" | "SMTP_FROM">): Mailer | undefined {
  if (!config.SMTP_URL) return undefined;
  let transport: Promise<ReturnType<typeof nodemailer.createTransport>> | undefined;
  const opened = () =>
    (transport ??= import("nodemailer").then(({ default: mailer }) =>
      mailer.createTransport({
        url: config.SMTP_URL,
        // An unreachable server must not hold a request for minutes.
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      } as Parameters<typeof nodemailer.createTransport>[0]),
    ));
  return {
    async send(mail) {
      const info = await (await opened()).sendMail({ from: config.SMTP_FROM, ...mail });
      return { messageId: String(info.messageId) };
    },
    close: () => void transport?.then((t) => t.close()),
  };
}

/** The invitation an investor receives with its link. */
export function invitationMail(input: { to: string; url: string; expiresAt: string }): OutgoingMail {
  const expires = new Date(input.expiresAt).toUTCString();
  return {
    to: input.to,
    subject: "Complete your investor onboarding",
    text: [
      "Hello,",
      "",
      "You have been invited to complete your investor onboarding (KYC).",
      "Open this link, enter your name and country, and confirm your wallet by signing a message with it:",
      "",
      input.url,
      "",
      `The link works once and expires on ${expires}.`,
      "If you did not expect this e-mail, ignore it.",
    ].join("\n"),
    html: [
      "<p>Hello,</p>",
      "<p>You have been invited to complete your investor onboarding (KYC). Open this link, enter your name and country, and confirm your wallet by signing a message with it:</p>",
      `<p><a href="${escapeHtml(input.url)}">${escapeHtml(input.url)}</a></p>`,
      `<p>The link works once and expires on ${escapeHtml(expires)}.</p>`,
      "<p>If you did not expect this e-mail, ignore it.</p>",
    ].join("\n"),
  };
}
