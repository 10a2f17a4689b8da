// The page `heaprec leaks --html` writes, in headless Chromium (Debian's, driven by playwright-core
// from web/package-lock.json): one chart panel per site, each with its own y axis ending at or just
// above the site's largest value, fitted lines inside their plot, the table's at exit column, and
// nothing loaded from anywhere.
//
//   node leaks_page_test.mjs --heaprec BIN --workload BIN --node-modules DIR --chromium BIN
//                            --workdir DIR [--screenshot PNG]
//
// The series comes from wl_leaks under `heaprec run --dump-interval 0.1` (a steady leak, a flat
// pool, churn). With HEAPREC_UPDATE_SCREENSHOTS=1 the test also writes docs/images/leaks.png.
// Prints one line per check and "N passed, M failed"; exits 1 on any failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { launchBrowser, makeChecks, parseArgs } from "./page_test_support.mjs";

const args = parseArgs("leaks_page_test", ["heaprec", "workload", "node-modules", "chromium",
  "workdir"]);
const { check, finish } = makeChecks();

fs.mkdirSync(path.join(args.workdir, "profiles"), { recursive: true });
const options = { cwd: args.workdir, stdio: ["ignore", "ignore", "inherit"] };
execFileSync(path.resolve(args.heaprec), ["run", "--dump-interval", "0.1", "--seed", "7", "--top",
  "0", "-o", "profiles/wl_leaks.%p.pb.gz", "--", path.resolve(args.workload), "30", "50"], options);
execFileSync(path.resolve(args.heaprec), ["leaks", "profiles", "--html", "leaks.html"], options);
const pageFile = path.join(args.workdir, "leaks.html");

const browser = await launchBrowser(args, { width: 1000, height: 760 });
const context = browser.context;
const requests = [];
const errors = [];
const url = pathToFileURL(pageFile).href;
try {
  const page = await context.newPage();
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url);

  // Each panel: its y axis's top, its plot box (on screen), its series' highest point and its fit.
  const panels = await page.$$eval("svg g.panel", (gs) => gs.map((g) => {
    const plot = g.getAttribute("data-plot").split(" ").map(Number);
    const ys = (g.querySelector("polyline.series")?.getAttribute("points") || "").trim()
      .split(/\s+/).filter(Boolean).map((p) => Number(p.split(",")[1]));
    const fit = g.querySelector("line.fit");
    return {
      name: g.querySelector("text.panel-title")?.textContent || "",
      yMax: Number(g.getAttribute("data-y-max")),
      top: plot[1], bottom: plot[3], ys,
      fit: fit ? [Number(fit.getAttribute("y1")), Number(fit.getAttribute("y2"))] : null,
      box: g.getBoundingClientRect().toJSON(),
    };
  }));
  check(panels.length >= 2, "one panel per site", panels.map((p) => p.name));
  const leak = panels.find((p) => /site_leak/.test(p.name));
  const pool = panels.find((p) => /site_pool/.test(p.name));
  check(leak && /^1\. site_leak/.test(leak.name), "the leak's panel comes first", panels[0]?.name);
  // The axes also hold the points' 95% intervals: sampled at 512 KiB, the pool's 4 MiB reach
  // about 15 MiB at the top of their bars, the leak's 30 MiB about 40.
  check(leak && pool && leak.yMax > 20 * 2 ** 20 && pool.yMax < leak.yMax / 2,
    "each panel has its own scale (leak ~30 MiB, pool ~4 MiB)", [leak?.yMax, pool?.yMax]);
  for (const p of panels) {
    const highest = Math.min(...p.ys);
    check(p.ys.length > 0 && p.bottom - highest > 0.3 * (p.bottom - p.top),
      `${p.name}: its largest value is not on the floor of its panel`, { highest, top: p.top });
    if (p.fit) {
      check(p.fit.every((y) => y >= p.top - 0.01 && y <= p.bottom + 0.01),
        `${p.name}: the fitted line stays inside the plot`, p.fit);
    }
  }
  check(leak && leak.fit !== null, "the suspect's fitted line is drawn");
  const boxes = panels.map((p) => p.box);
  const overlap = boxes.some((a, i) => boxes.some((b, j) => i < j && a.left < b.right &&
    b.left < a.right && a.top < b.bottom && b.top < a.bottom));
  check(!overlap, "panels do not overlap", boxes);
  const headers = await page.$$eval("table th", (ths) => ths.map((t) => t.textContent));
  check(headers.includes("at exit"), "the table has an at exit column", headers);
  const atExit = await page.$$eval("table td.at-exit", (tds) => tds.map((t) => t.textContent));
  check(atExit.length > 0 && /MiB/.test(atExit[0]), "the leak's bytes at exit are shown", atExit);

  if (process.env.HEAPREC_UPDATE_SCREENSHOTS === "1" && args.screenshot) {
    const height = await page.evaluate(() => document.body.scrollHeight);
    await page.setViewportSize({ width: 1000, height: Math.min(1400, height + 8) });
    fs.mkdirSync(path.dirname(args.screenshot), { recursive: true });
    await page.screenshot({ path: args.screenshot, fullPage: true });
    console.log(`wrote ${args.screenshot}`);
  }
  await page.close();
  const foreign = requests.filter((u) => u !== url);
  check(foreign.length === 0, "the page requests nothing but itself", foreign);
  check(errors.length === 0, "no script errors", errors);
} catch (e) {
  check(false, "the test ran to its end", String(e && e.stack || e));
} finally {
  await browser.close();
}
finish();
