// The operator console's one script (served from /console/assets/, CSP script-src 'self'): every change is a form
// that names its JSON endpoint (data-action); this sends it with the session's CSRF token, after a confirmation when
// the form asks for one (data-confirm), and says what happened in the page's live region. It also copies hashes
// (button.copy), folds the navigation behind its Menu button on small screens, and keeps live pages (main[data-live])
// current: it listens to the console's event stream and reads the page again when something happened. Pages work
// with the keyboard alone, and without this script (it only adds to them).
(() => {
  "use strict";
  document.documentElement.classList.add("js");
  const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "";
  const notice = document.getElementById("notice");
  const dialog = document.getElementById("confirm");
  const KEPT = "tak-console-notice";

  function say(text, kind) {
    if (!notice) return;
    notice.textContent = text;
    notice.className = `notice ${kind}`;
    notice.setAttribute("role", kind === "error" ? "alert" : "status");
    notice.hidden = false;
    notice.focus();
  }

  const kept = sessionStorage.getItem(KEPT);
  if (kept) {
    sessionStorage.removeItem(KEPT);
    say(kept, "success");
  }

  /** Opens the confirmation dialog with `text`; resolves true when the operator confirms. */
  function confirmed(text) {
    if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(window.confirm(text));
    document.getElementById("confirm-text").textContent = text;
    return new Promise((resolve) => {
      const ok = document.getElementById("confirm-ok");
      const cancel = document.getElementById("confirm-cancel");
      const done = (answer) => {
        ok.removeEventListener("click", yes);
        cancel.removeEventListener("click", no);
        dialog.removeEventListener("cancel", no);
        dialog.close();
        resolve(answer);
      };
      const yes = () => done(true);
      const no = (event) => {
        event?.preventDefault();
        done(false);
      };
      ok.addEventListener("click", yes);
      cancel.addEventListener("click", no);
      dialog.addEventListener("cancel", no);
      dialog.showModal();
      cancel.focus();
    });
  }

  /** The form's fields as JSON: inputs marked data-type="number" as numbers, empty optional fields left out. */
  function bodyOf(form) {
    const body = {};
    for (const element of form.elements) {
      if (!element.name || element.disabled) continue;
      const value = element.value;
      if (value === "" && !element.required) continue;
      if (element.dataset.type === "number") body[element.name] = Number(value);
      else if (element.dataset.type === "time")
        body[element.name] = new Date(`${value}Z`).toISOString(); // datetime-local, read as UTC
      else body[element.name] = value;
    }
    return body;
  }

  async function submit(form) {
    const text = form.dataset.confirm;
    if (text && !(await confirmed(text))) return;
    const method = (form.dataset.method || "POST").toUpperCase();
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.dataset.action, {
        method,
        headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": csrf },
        body: method === "DELETE" ? undefined : JSON.stringify(bodyOf(form)),
        credentials: "same-origin",
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(answer.message || `The service answered ${response.status}`);
      const done = form.dataset.done || "Done.";
      if (form.dataset.secret) {
        const output = document.getElementById(form.dataset.secret);
        output.textContent = answer.apiKey;
        output.hidden = false;
        say(`${done} Copy the key now: it is not shown again.`, "success");
      } else if (form.dataset.redirect) {
        window.location.assign(form.dataset.redirect);
      } else {
        sessionStorage.setItem(KEPT, done);
        window.location.reload();
      }
    } catch (error) {
      say(error.message || String(error), "error");
    } finally {
      if (button) button.disabled = false;
    }
  }

  // Delegated: forms and buttons a live page brought in later work as the first ones do.
  document.addEventListener("submit", (event) => {
    const form = event.target.closest && event.target.closest("form[data-action]");
    if (!form) return;
    event.preventDefault();
    void submit(form);
  });

  /** Copies a hash or an address: the clipboard API where the page may use it, else a selection copied. */
  async function copy(button) {
    const value = button.dataset.copy;
    let copied = false;
    try {
      await navigator.clipboard.writeText(value);
      copied = true;
    } catch {
      const area = document.createElement("textarea");
      area.value = value;
      area.setAttribute("readonly", "");
      area.className = "sr-only";
      document.body.appendChild(area);
      area.select();
      copied = document.execCommand("copy");
      area.remove();
    }
    button.textContent = copied ? "copied" : "not copied";
    button.setAttribute("aria-label", copied ? `Copied ${value}` : `Could not copy ${value}`);
    setTimeout(() => {
      button.textContent = "copy";
      button.setAttribute("aria-label", `Copy ${value}`);
    }, 2000);
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button.copy");
    if (button) void copy(button);
  });

  // The navigation on a small screen: folded behind the Menu button (open by itself when the script cannot run).
  const menuButton = document.getElementById("menu-button");
  const menu = document.getElementById("menu");
  if (menuButton && menu) {
    menuButton.addEventListener("click", () => {
      const open = menuButton.getAttribute("aria-expanded") !== "true";
      menuButton.setAttribute("aria-expanded", String(open));
      menu.classList.toggle("open", open);
    });
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || menuButton.getAttribute("aria-expanded") !== "true") return;
      menuButton.setAttribute("aria-expanded", "false");
      menu.classList.remove("open");
      menuButton.focus();
    });
  }

  const main = document.getElementById("main");
  const live = document.getElementById("live");
  const status = document.getElementById("live-status");
  if (main && live && main.dataset.live) keepCurrent(main.dataset.live);

  /**
   * Reads the page again (its #live part) at most every MIN_GAP_MS when an event came, and every EVERY_MS anyway
   * (ages and thresholds move with time alone). Never while the operator is in the middle of something on it: a
   * dialog open, a field or button of it focused, text of it selected; it waits for them to be done.
   */
  function keepCurrent(streamUrl) {
    const MIN_GAP_MS = 1500;
    const EVERY_MS = 15000;
    let last = Date.now();
    let timer;
    let stopped = false;
    const busy = () =>
      (dialog && dialog.open) ||
      (document.activeElement && document.activeElement !== document.body && live.contains(document.activeElement)) ||
      (window.getSelection &&
        String(window.getSelection()).length > 0 &&
        live.contains(window.getSelection().anchorNode));
    const schedule = (ms) => {
      clearTimeout(timer);
      timer = setTimeout(refresh, Math.max(0, ms));
    };
    async function refresh() {
      if (stopped) return;
      if (document.hidden || busy()) return schedule(1000);
      last = Date.now();
      try {
        const response = await fetch(window.location.href, { credentials: "same-origin", cache: "no-store" });
        const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("live");
        if (!response.ok || !fresh) throw new Error(`the page answered ${response.status}`);
        if (busy()) return schedule(1000);
        const open = [...live.querySelectorAll("details[id][open]")].map((d) => d.id);
        live.replaceChildren(...[...fresh.childNodes].map((n) => document.importNode(n, true)));
        for (const id of open) document.getElementById(id)?.setAttribute("open", "");
        if (status) status.textContent = `Updated ${new Date().toISOString().slice(11, 19)} UTC; updates by itself.`;
      } catch (error) {
        if (status) status.textContent = `Not updated (${error.message}); trying again.`;
      }
      schedule(EVERY_MS);
    }
    const source = new EventSource(streamUrl, { withCredentials: true });
    source.onmessage = () => schedule(Math.max(0, last + MIN_GAP_MS - Date.now()));
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED && status)
        status.textContent = "Live updates stopped: reload the page.";
    };
    window.addEventListener("pagehide", () => {
      stopped = true;
      source.close();
    });
    schedule(EVERY_MS);
  }
})();
