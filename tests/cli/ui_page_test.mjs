// `heaprec ui` in headless Chromium (Debian's, driven by playwright-core from
// web/package-lock.json), on wl_leaks's run with --dump-interval 0.1 (a steady leak, a pool,
// churn): the page opens on the exit profile, the timeline is drawn and a click on it shows the
// heap then, the sample types switch, a row's callers and callees, a comparison coloured by change,
// the flame graph, the leaks table with its at exit column; the page loads nothing from anywhere.
// Then the same page served: `heaprec ui DIR` prints its URL, serves it, answers 404 elsewhere and
// exits 0 on SIGTERM.
//
//   node ui_page_test.mjs --heaprec BIN --workload BIN --node-modules DIR --chromium BIN
//                         --workdir DIR [--screenshot PNG]
//
// With HEAPREC_UPDATE_SCREENSHOTS=1 the test also writes the screenshot the README shows
// (docs/images/ui.png). Prints one line per check and "N passed, M failed"; exits 1 on any failure.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";

import { launchBrowser, makeChecks, parseArgs } from "./page_test_support.mjs";

const args = parseArgs("ui_page_test", ["heaprec", "workload", "node-modules", "chromium",
  "workdir"]);
const { check, finish } = makeChecks();

fs.mkdirSync(path.join(args.workdir, "profiles"), { recursive: true });
const options = { cwd: args.workdir, stdio: ["ignore", "ignore", "inherit"] };
execFileSync(path.resolve(args.heaprec), ["run", "--dump-interval", "0.1", "--seed", "7", "--top",
  "0", "-o", "profiles/wl_leaks.%p.pb.gz", "--", path.resolve(args.workload), "30", "50"], options);
execFileSync(path.resolve(args.heaprec), ["ui", "profiles", "-o", "ui.html"], options);
const pageFile = path.join(args.workdir, "ui.html");

// "1.5 MiB" -> bytes.
function bytes(text) {
  const m = /(-?[\d.]+) (B|KiB|MiB|GiB)/.exec(text || "");
  return m ? Number(m[1]) * { B: 1, KiB: 1024, MiB: 2 ** 20, GiB: 2 ** 30 }[m[2]] : NaN;
}
const firstRow = (page) => page.$eval("#top tbody tr", (tr) => [...tr.cells].map((c) => c.textContent));

const browser = await launchBrowser(args, { width: 1280, height: 900 });
const requests = [];
const errors = [];
const url = pathToFileURL(pageFile).href;
let server = null;
try {
  const page = await browser.context.newPage();
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url);

  const label = await page.$eval("#profile", (s) => s.options[s.selectedIndex].text);
  check(/exit/.test(label), "the page opens on the exit profile", label);
  const atExit = await firstRow(page);
  check(/site_leak/.test(atExit.at(-1)), "the leak heads the table at exit", atExit);
  check(await page.$(".uplot canvas") !== null, "the timeline is drawn");
  const note = await page.textContent("#timeline-note");
  check(/Peak [\d.]+ MiB at [\d.]+ s/.test(note), "the timeline names the peak and when", note);

  // A click a quarter into the timeline: the heap then, from the last profile before that moment.
  const over = await page.$(".u-over");
  const box = await over.boundingBox();
  await page.mouse.click(box.x + box.width * 0.25, box.y + box.height / 2);
  const clicked = await page.textContent("#timeline-note");
  const m = /showing the profile at ([\d.]+) s \((\w+)\), the last one at or before the ([\d.]+) s clicked/
    .exec(clicked);
  check(m && m[2] === "interval" && Number(m[1]) <= Number(m[3]) + 0.005,
    "a click shows the interval profile taken at or before that moment", clicked);
  const then = await firstRow(page);
  check(/site_leak|site_pool/.test(then.at(-1)) && bytes(then[0]) < bytes(atExit[0]),
    "a quarter into the run the leak held less than at exit", [then, atExit]);

  // Sample types: by allocations, the churn (64 per round) comes before the leak (4 per round).
  await page.click('#types button[data-type="alloc_objects"]');
  const summary = await page.textContent("#summary");
  const byCount = await firstRow(page);
  check(/^alloc_objects/.test(summary) && /site_churn/.test(byCount.at(-1)),
    "alloc_objects puts the churn first", [summary, byCount]);
  await page.click('#types button[data-type="inuse_space"]');

  // Callers and callees of the leak.
  await page.selectOption("#profile", { label });
  await page.click("#top tbody tr");
  const callersTitle = await page.textContent("#callers-title");
  const callers = await page.$$eval("#callers tbody tr td.name", (tds) => tds.map((t) => t.textContent));
  check(/site_leak/.test(callersTitle) && callers.length > 0 && !callers.some((c) => /site_leak/.test(c)),
    "a row shows the function's callers", [callersTitle, callers]);

  // Compared with the first interval profile: the leak grew, shown in red.
  const first = await page.$eval("#base", (s) => [...s.options].find((o) => /interval/.test(o.text)).text);
  await page.selectOption("#base", { label: first });
  const head = await page.$$eval("#top thead th", (ths) => ths.map((t) => t.textContent));
  const leakDelta = await page.$$eval("#top tbody tr", (trs) => {
    const tr = trs.find((r) => /site_leak/.test(r.textContent));
    return tr ? [tr.querySelector("td.delta").className, tr.querySelector("td.delta").textContent] : null;
  });
  check(head.includes("change") && leakDelta && /grow/.test(leakDelta[0]) && /^\+/.test(leakDelta[1]),
    "against an early moment the leak's growth is red", [head, leakDelta]);
  await page.selectOption("#base", "-1");

  // The flame graph.
  await page.click('#tabs button[data-tab="flame"]');
  await page.waitForTimeout(400);
  const frames = await page.$$eval("#flame g", (gs) => gs.map((g) => g.textContent));
  check(frames.length > 3 && frames.some((f) => /site_leak/.test(f)), "the flame graph draws the leak",
    frames.length);

  // The leaks of the series, with what was still live at exit.
  await page.click('#tabs button[data-tab="leaks"]');
  const leakHeaders = await page.$$eval("#leaks th", (ths) => ths.map((t) => t.textContent));
  const suspect = await page.$$eval("#leaks tr.suspect", (trs) => trs.map((t) => t.textContent));
  check(leakHeaders.includes("at exit") && suspect.some((t) => /site_leak/.test(t) && /MiB/.test(t)),
    "the leaks table marks the leak a suspect, with its bytes at exit", [leakHeaders, suspect]);

  if (process.env.HEAPREC_UPDATE_SCREENSHOTS === "1" && args.screenshot) {
    await page.click('#tabs button[data-tab="table"]');
    await page.selectOption("#profile", { label });
    await page.click("#top tbody tr");
    await page.setViewportSize({ width: 1280, height: 820 });
    fs.mkdirSync(path.dirname(args.screenshot), { recursive: true });
    await page.screenshot({ path: args.screenshot });
    console.log(`wrote ${args.screenshot}`);
  }
  await page.close();
  const foreign = requests.filter((u) => u !== url);
  check(foreign.length === 0, "the page requests nothing but itself", foreign);
  check(errors.length === 0, "no script errors", errors);

  // Served: the URL on stdout, the page there, 404 elsewhere, exit 0 on SIGTERM.
  server = spawn(path.resolve(args.heaprec), ["ui", "profiles", "--port", "0"],
    { cwd: args.workdir, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve([code, signal])));
  const served = await new Promise((resolve) => {
    let out = "";
    server.stdout.on("data", (d) => {
      out += d;
      const found = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (found) resolve(found[1]);
    });
    server.on("exit", () => resolve(null));
  });
  check(served !== null, "heaprec ui prints the URL it serves", served);
  if (served) {
    await browser.context.setOffline(false);  // loopback only: the page it serves
    const live = await browser.context.newPage();
    await live.goto(served);
    const row = await firstRow(live);
    check(/site_leak/.test(row.at(-1)), "the served page shows the same table", row);
    await live.close();
    const status = await new Promise((resolve) => {
      http.get(served + "debug/pprof/heap", (res) => { res.resume(); resolve(res.statusCode); })
        .on("error", () => resolve(0));
    });
    check(status === 404, "other paths are not found", status);
  }
  server.kill("SIGTERM");
  const [code, signal] = await exited;
  check(code === 0, "SIGTERM ends heaprec ui with status 0", [code, signal]);

  // A running process's --http endpoint as the input: fetched, symbolized, shown.
  fs.mkdirSync(path.join(args.workdir, "running"), { recursive: true });
  const running = spawn(path.resolve(args.heaprec), ["run", "--http", "0", "--top", "0", "-o",
    "running/wl_leaks.%p.pb.gz", "--", path.resolve(args.workload), "200", "50"],
  { cwd: args.workdir, stdio: ["ignore", "ignore", "pipe"] });
  const endpoint = await new Promise((resolve) => {
    let err = "";
    running.stderr.on("data", (d) => {
      err += d;
      const found = /serving (http:\/\/127\.0\.0\.1:\d+\/debug\/pprof\/heap)/.exec(err);
      if (found) resolve(found[1]);
    });
    running.on("exit", () => resolve(null));
  });
  check(endpoint !== null, "the running program serves its profile", endpoint);
  if (endpoint) {
    // The program serves as soon as it starts; its leak is in the profile once a round of it has
    // been sampled (each round's four blocks are missed with probability 0.6^4). Wait for that
    // state, seen in the served profile's names, rather than for a time: on a loaded machine the
    // first fetch came before it.
    const names = () => new Promise((resolve) => {
      http.get(endpoint, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          try { resolve(zlib.gunzipSync(Buffer.concat(chunks)).toString("latin1")); }
          catch { resolve(""); }
        });
      }).on("error", () => resolve(""));
    });
    for (let tries = 0; tries < 200 && !(await names()).includes("site_leak"); ++tries) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    execFileSync(path.resolve(args.heaprec), ["ui", endpoint, "-o", "running.html"], options);
    const html = fs.readFileSync(path.join(args.workdir, "running.html"), "utf8");
    check(/site_leak/.test(html) && html.includes(endpoint), "heaprec ui URL shows the live heap",
      html.length);
  }
  running.kill("SIGTERM");
} catch (e) {
  check(false, "the test ran to its end", String(e && e.stack || e));
} finally {
  if (server && server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
  await browser.close();
}
finish();
