// The operator console's one script (served from /console/assets/, CSP script-src 'self'): every change is a form
// that names its JSON endpoint (data-action); this sends it with the session's CSRF token, after a confirmation when
// the form asks for one (data-confirm), and says what happened in the page's live region. Pages work with the keyboard
// alone: forms, buttons and the confirmation dialog are the browser's own elements.
(() => {
  "use strict";
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

  for (const form of document.querySelectorAll("form[data-action]")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void submit(form);
    });
  }
})();
