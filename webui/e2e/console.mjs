// Drives the web console of a running `ordo serve --http` in Debian's
// headless Chromium (playwright-core, no browser download), as a person
// would: refuse a sign-in posted, and a session cookie planted, by a page
// on another port of the host, sign in, start a run that needs approval,
// approve it and watch it complete without a reload, answer a missing input, be told of a sign-out
// under an open page and come back to it signing in, start two turns of one
// session and find them on its page, fork a run, retry a failed step with
// an edited payload, check a tool's <script> output stays text, time the
// page of a 200-step run, and as an admin add and remove a plugin. Run by
// e2e_test.go, which passes everything in the environment.
// Prints one line per step; exits non-zero on the first failure.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const base = env("ORDO_URL");
const shots = env("SHOT_DIR");
const timeout = 20000;

const step = (name) => console.log(`step: ${name}`);
const check = (ok, what) => {
  if (!ok) throw new Error(`check failed: ${what}`);
};

// plan is a one- or two-action text.template plan.
function plan(goal, template, values, second) {
  const actions = [{ id: "greet", tool: "text.template", intent: "transform", requires: [], produces: ["text"],
    inputs: { template, values } }];
  if (second) {
    actions.push({ id: "shout", tool: "text.template", intent: "transform", requires: ["text"], produces: [],
      inputs: { template: "{{t}}!", values: {} }, input_bindings: { "values.t": "text" } });
  }
  return JSON.stringify({ version: "1.0", goal, timezone: "UTC", actions }, null, 2);
}

const dir = mkdtempSync(join(tmpdir(), "ordo-chromium-"));
const ctx = await chromium.launchPersistentContext(dir, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 900 },
});
ctx.setDefaultTimeout(timeout);
const page = ctx.pages()[0] || (await ctx.newPage());
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

async function signIn(token) {
  await page.goto(base + "/ui/signin");
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/runs$/);
}

// planN is n text.template actions, each after the one before.
function planN(goal, n) {
  const actions = [];
  for (let i = 1; i <= n; i++) {
    actions.push({ id: `t${i}`, tool: "text.template", intent: "transform", requires: [], produces: [],
      inputs: { template: `step ${i}`, values: {} }, ...(i > 1 ? { depends_on: [`t${i - 1}`] } : {}) });
  }
  return JSON.stringify({ version: "1.0", goal, timezone: "UTC", actions, constraints: { max_actions: n } });
}

// startRun types a plan into the new-run form (checked inline as it is
// typed) and starts it; it returns the run page's URL.
async function startRun(text) {
  await page.goto(base + "/ui/runs/new");
  return submitRun(text);
}

// submitRun fills the plan of the new-run form on the page and starts it.
async function submitRun(text) {
  await page.locator("#plan").fill(text);
  await page.locator("#plan-check", { hasText: "Valid plan" }).waitFor();
  await page.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL(/\/ui\/runs\/run_[0-9a-f]+$/);
  return page.url();
}

const status = () => page.locator("#run-status");
async function waitStatus(s) {
  await page.locator("#run-status", { hasText: new RegExp(`^${s}$`) }).waitFor();
}

try {
  step("a page on another port of this host cannot sign you in as someone else");
  const attacker = env("EVIL_URL");
  await page.goto(attacker + "/login"); // posts ada's token with a planted CSRF cookie
  await page.waitForURL(/\/ui\/signin$/);
  await page.locator(".error", { hasText: /^2003 / }).waitFor();
  await page.goto(base + "/ui/runs");
  await page.waitForURL(/\/ui\/signin$/); // not signed in
  // The refusal is a 403, which Chromium logs as a failed load: expected.
  check(errors.every((e) => /status of 403/.test(e)), "no other script error: " + errors.join("; "));
  errors.length = 0;

  step("sign in");
  await signIn(env("BOB_TOKEN"));

  step("a session cookie planted from another port signs you out, not in as someone else");
  await page.goto(attacker + "/plant"); // ada's session at /ui/runs, sent before bob's
  await page.goto(base + "/ui/runs/new");
  await page.locator(".error", { hasText: /^2001 .*two console sign-ins/ }).waitFor();
  check((await page.locator(".who").count()) === 0, "nobody is shown signed in");
  check(errors.every((e) => /status of 401/.test(e)), "no other script error: " + errors.join("; "));
  errors.length = 0;
  await page.getByLabel("Token").fill(env("BOB_TOKEN"));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/runs\/new$/);
  check((await page.locator(".who").textContent()) === "bob", "signed in again as bob, back on the page");

  step("inline plan validation");
  await page.goto(base + "/ui/runs/new");
  await page.locator("#plan").fill('{"version":"1.0","goal":"g","actions":[{"id":"a1"}]}');
  await page.locator("#plan-check.bad").waitFor();
  check(/^\d{4} .*timezone/.test(await page.locator("#plan-check").textContent()), "the schema's coded error is shown");

  step("start a run that needs approval");
  const runURL = await startRun(plan("greet Ada loudly", "Hello, {{name}}", { name: "Ada" }, true));
  await page.getByRole("button", { name: "Approve" }).waitFor();
  await page.screenshot({ path: join(shots, "console-approval.png"), fullPage: true });

  step("approve it and watch it complete without a reload");
  await page.evaluate(() => { window.__noReload = "still here"; });
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");
  check((await page.evaluate(() => window.__noReload)) === "still here", "the page was not reloaded");
  await page.getByText("Hello, Ada!").first().waitFor();
  await page.locator("g.node.n-succeeded").nth(1).waitFor();
  await page.screenshot({ path: join(shots, "console-run.png"), fullPage: true });

  step("an edited plan is checked as it is typed, and refused when sent");
  await startRun(plan("greet someone", "Hello, {{name}}", { name: "MISSING" }, false));
  await page.getByText("Edit the plan").click();
  await page.locator("#edit-plan").fill('{"version":"1.0","goal":"g","actions":[{"id":"a1"}]}');
  await page.locator("#edit-plan-check.bad").waitFor();
  check(/^\d{4} /.test(await page.locator("#edit-plan-check").textContent()), "the edited plan's coded error is shown inline");
  const seen = errors.length;
  await page.getByRole("button", { name: "Edit" }).click();
  await page.locator("form.d-edit .form-error", { hasText: /\d{4}/ }).waitFor();
  check((await status().textContent()) === "interrupted", "a refused edit changes nothing");
  // The refusal is a 400, which Chromium logs as a failed load: expected.
  check(errors.slice(seen).every((e) => /status of 400/.test(e)), "no other script error: " + errors.slice(seen).join("; "));
  errors.length = seen;

  step("answer a missing input");
  await page.getByRole("button", { name: "Approve" }).click();
  await page.getByRole("button", { name: "Answer" }).waitFor();
  await page.getByLabel("$.values.name").fill("Grace");
  await page.getByRole("button", { name: "Answer" }).click();
  await waitStatus("completed");
  await page.getByText("Hello, Grace").first().waitFor();

  step("signed out under an open page: told so, and signing in again comes back to it");
  const waiting = await startRun(plan("greet Lin", "Hello, {{name}}", { name: "Lin" }, false));
  await page.getByRole("button", { name: "Approve" }).waitFor();
  check(await page.locator("#signed-out").isHidden(), "no sign-out notice while signed in");
  const before = errors.length;
  const other = await ctx.newPage(); // the same person signs out in another tab
  await other.goto(base + "/ui/runs");
  await other.getByRole("button", { name: "Sign out" }).click();
  await other.waitForURL(/\/ui\/signin$/);
  await other.close();
  // Signing out ends the page's event stream: the page says so unasked.
  await page.locator("#signed-out").waitFor();
  await page.getByRole("button", { name: "Approve" }).click();
  await page.locator("form.d-approve .form-error", { hasText: /^2001 / }).waitFor();
  check((await status().textContent()) === "interrupted", "nothing was approved");
  // The refusal is a 401, which Chromium logs as a failed load: expected.
  check(errors.slice(before).every((e) => /status of 401/.test(e)), "no other script error: " + errors.slice(before).join("; "));
  errors.length = before;
  await page.getByRole("link", { name: "Sign in again" }).click();
  await page.getByLabel("Token").fill(env("BOB_TOKEN"));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(waiting);
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");

  step("two turns of one session, in order on its page");
  await page.goto(base + "/ui/runs/new");
  await page.getByLabel(/^Session/).fill("e2e chat");
  const turn1 = await submitRun(plan("first turn: greet Ada", "Hello, {{name}}", { name: "Ada" }, false));
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");
  await page.getByRole("link", { name: "e2e chat" }).click();
  await page.waitForURL(/\/ui\/session\?id=e2e(\+|%20)chat$/);
  await page.getByRole("link", { name: "New turn" }).click();
  await page.waitForURL(/\/ui\/runs\/new\?session=/);
  check((await page.getByLabel(/^Session/).inputValue()) === "e2e chat", "New turn names the session");
  const turn2 = await submitRun(plan("second turn: greet Grace", "Hello, {{name}}", { name: "Grace" }, false));
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("link", { name: "e2e chat" }).click();
  const turns = page.locator("ol.turns > li");
  check((await turns.count()) === 2, "the session has two turns");
  await page.screenshot({ path: join(shots, "console-session.png"), fullPage: true });
  for (const [i, goal] of ["first turn: greet Ada", "second turn: greet Grace"].entries()) {
    const text = await turns.nth(i).innerText();
    check(text.includes(goal) && text.includes("completed") && text.includes("Done:"), `turn ${i + 1} shows its goal, status and answer: ${text}`);
  }
  await turns.nth(0).getByRole("link", { name: "first turn: greet Ada" }).click();
  await page.waitForURL(turn1);
  await page.goBack();
  await turns.nth(1).getByRole("link", { name: "second turn: greet Grace" }).click();
  await page.waitForURL(turn2);

  step("fork a run");
  await page.goto(runURL);
  await page.getByRole("button", { name: "Fork from here" }).last().click();
  await page.waitForURL((u) => /\/ui\/runs\/run_/.test(u.href) && u.href !== runURL);
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");

  step("a tool's <script> stays text");
  const evil = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';
  await startRun(plan("echo markup", evil, {}, false));
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");
  await page.getByText("<script>window.__xss = 1</script>").first().waitFor();
  check((await page.evaluate(() => window.__xss)) === undefined, "no script from a tool's output ran");
  check((await page.locator("main script, main img").count()) === 0, "no element from a tool's output");

  step("retry a failed step with an edited payload");
  await startRun(plan("fail, then retry", "{{t}}!", {}, false));
  await page.getByRole("button", { name: "Approve" }).click();
  await page.getByRole("button", { name: "Retry" }).waitFor();
  await page.locator("form.d-retry summary").click();
  await page.locator("form.d-retry textarea[name=payload]").fill('{"template": "{{t}}!", "values": {"t": "fixed"}}');
  await page.getByRole("button", { name: "Retry" }).click();
  await waitStatus("completed");
  await page.getByText("fixed!").first().waitFor();

  step("the page of a 200-step run");
  const big = await startRun(planN("two hundred steps", 200));
  await page.getByRole("button", { name: "Approve" }).click();
  await waitStatus("completed");
  await page.goto(big);
  const nav = await page.evaluate(() => performance.getEntriesByType("navigation")[0].toJSON());
  check((await page.locator("table.steps tbody tr").count()) === 200, "200 step rows");
  console.log(`200-step run page: ${nav.transferSize} bytes, DOM ready ${Math.round(nav.domContentLoadedEventEnd)} ms, loaded ${Math.round(nav.loadEventEnd)} ms`);

  step("admin: add and remove a plugin");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/ui\/signin$/);
  await signIn(env("ADA_TOKEN"));
  await page.goto(base + "/ui/admin");
  const shown = await page.locator("pre.config").innerText();
  check(shown.includes("HIDDEN") && !shown.includes(env("ADA_TOKEN")) && !shown.includes(env("BOB_TOKEN")),
    "the running configuration hides the tokens");
  await page.getByLabel("Name").first().fill("hello");
  await page.getByLabel("Path").fill(env("HELLO_PATH"));
  await page.getByLabel("SHA-256").fill(env("HELLO_SHA256"));
  await page.getByRole("button", { name: "Add plugin" }).click();
  await page.getByText("added hello").waitFor();
  await page.getByRole("button", { name: "Remove hello" }).waitFor();
  await page.getByRole("button", { name: "Remove hello" }).click();
  await page.getByText("removed hello").waitFor();
  check((await page.getByRole("button", { name: "Remove hello" }).count()) === 0, "hello is gone");

  check(errors.length === 0, "no script errors: " + errors.join("; "));
  console.log("ok");
} catch (e) {
  console.error(String(e && e.stack || e));
  console.error("page: " + page.url());
  try { console.error((await page.locator("main").innerText()).slice(0, 3000)); } catch {}
  process.exitCode = 1;
} finally {
  await ctx.close();
  rmSync(dir, { recursive: true, force: true });
}
