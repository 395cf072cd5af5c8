// Ordo console: follows a run's event stream and swaps in the live part of
// its page, submits action forms without leaving the page, and checks plan
// JSON as it is typed. Everything shown comes from the server, already
// escaped; this script never builds HTML from data.
"use strict";
(function () {
  const csrf = () => (document.querySelector('meta[name="csrf"]') || {}).content || "";

  // A 401 means the sign-in is gone (the server restarted, or it
  // expired): say so at the top, with a way back to this very page,
  // rather than leave a page that silently stopped following the run.
  function signedOut(res) {
    const note = document.getElementById("signed-out");
    if (res.status !== 401 || !note) return false;
    document.getElementById("signed-out-link").href =
      "/ui/signin?next=" + encodeURIComponent(location.pathname + location.search);
    note.hidden = false;
    return true;
  }

  // Live run page: every event of the run's stream refetches #live.
  const live = document.getElementById("live");
  let busy = false, again = false, shown = null;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const res = await fetch(live.dataset.live, { headers: { "X-Ordo-Fetch": "1" }, credentials: "same-origin" });
      if (signedOut(res)) return;
      if (res.ok) {
        const html = await res.text();
        const open = document.activeElement && live.contains(document.activeElement) &&
          /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName);
        // The same run renders the same HTML: leave the page (open
        // details, a half-typed answer) as it is.
        if (html === shown) { /* nothing moved */ }
        else if (!open) { shown = html; live.innerHTML = html; wire(live); }
        else { again = true; }
      }
    } finally {
      busy = false;
      if (again) { again = false; setTimeout(refresh, 300); }
    }
  }
  if (live && live.dataset.events && window.EventSource) {
    const es = new EventSource(live.dataset.events, { withCredentials: true });
    const kinds = (live.dataset.kinds || "").split(" ").filter(Boolean);
    for (const k of kinds) es.addEventListener(k, refresh);
    es.onmessage = refresh;
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) refresh(); };
  }

  // Forms marked "act" post in the background: the run page stays and
  // follows the run; a form that leads elsewhere goes there.
  document.addEventListener("submit", async (ev) => {
    const form = ev.target;
    if (!form.classList || !form.classList.contains("act")) return;
    ev.preventDefault();
    const out = form.querySelector(".form-error");
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    if (out) out.textContent = "";
    try {
      const res = await fetch(form.action, {
        method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin",
        headers: { "X-Ordo-Fetch": "1", "X-CSRF-Token": csrf() },
      });
      signedOut(res);
      const body = await res.json().catch(() => ({ ok: false, error: { message: "HTTP " + res.status } }));
      if (body.ok) {
        if (body.location) { window.location.assign(body.location); return; }
        if (live) refresh();
      } else if (out) {
        const e = body.error || {};
        out.textContent = (e.code ? e.code + " " : "") + (e.message || "refused");
      }
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });

  // Plan JSON typed into a textarea[data-validate] is checked against the
  // Action Plan schema as it changes (POST /ui/plan/validate).
  function wire(root) {
    root.querySelectorAll("textarea[data-validate]").forEach((ta) => {
      if (ta.dataset.wired) return;
      ta.dataset.wired = "1";
      const out = document.getElementById(ta.dataset.validate);
      let timer;
      const check = async () => {
        if (!ta.value.trim()) { out.textContent = ""; return; }
        const res = await fetch("/ui/plan/validate", {
          method: "POST", body: ta.value, credentials: "same-origin",
          headers: { "Content-Type": "text/plain", "X-Ordo-Fetch": "1", "X-CSRF-Token": csrf() },
        });
        signedOut(res);
        const body = await res.json().catch(() => ({}));
        out.classList.toggle("bad", !body.ok);
        if (body.ok) out.textContent = "Valid plan, " + body.actions + " action" + (body.actions === 1 ? "" : "s") + ".";
        else if (body.error) {
          const d = body.error.details || {};
          out.textContent = body.error.code + " " + body.error.message + (d.instance ? " at " + d.instance : "");
        }
      };
      ta.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(check, 300); });
      if (ta.value.trim()) check();
    });
  }
  wire(document);
})();
