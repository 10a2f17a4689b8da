// The page `heaprec flame` writes, in headless Chromium (Debian's, driven by playwright-core from
// web/package-lock.json): frames are drawn, the sample-type switch re-renders, a click zooms, search
// highlights, hover shows values (with ± 95% intervals only for a sampled profile), and the page
// loads nothing from anywhere.
//
//   node flame_page_test.mjs --heaprec BIN --workload BIN --node-modules DIR --chromium BIN
//                            --workdir DIR [--screenshot PNG]
//
// The profiles come from running flame_workload under `heaprec run`: once exact (--sample-interval
// 1), once sampled. With HEAPREC_UPDATE_SCREENSHOTS=1 the test also writes the screenshot the README
// shows (docs/images/flame.png). Prints one line per check and "N passed, M failed"; exits 1 on any
// failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { launchBrowser, makeChecks, parseArgs } from "./page_test_support.mjs";

const args = parseArgs("flame_page_test", ["heaprec", "workload", "node-modules", "chromium",
  "workdir"]);
const { check, finish } = makeChecks();

function profileAndRender(name, sampleInterval) {
  const profile = `${name}.pb.gz`;  // relative, as a user would type it: the page shows it
  const options = { cwd: args.workdir, stdio: ["ignore", "ignore", "inherit"] };
  execFileSync(path.resolve(args.heaprec), ["run", "--sample-interval", sampleInterval, "--seed", "7",
    "--top", "0", "-o", profile, "--", path.resolve(args.workload), "2000"], options);
  execFileSync(path.resolve(args.heaprec), ["flame", profile], options);
  return path.join(args.workdir, `${name}.html`);
}
const exactPage = profileAndRender("exact", "1");
const sampledPage = profileAndRender("sampled", "16K");

const browser = await launchBrowser(args, { width: 1280, height: 760 });
const context = browser.context;

// Every request the page makes, and every error it reports.
const requests = [];
const errors = [];
async function open(file) {
  const page = await context.newPage();
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  const url = pathToFileURL(file).href;
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll("#chart g.frame").length > 0);
  await page.waitForTimeout(700);  // d3 transitions (300 ms) and delayed labels
  return { page, url };
}

// Frames as the page draws them: name, width of the rect, fill, depth, value.
async function frames(page) {
  return page.evaluate(() => [...document.querySelectorAll("#chart g.frame")].map((g) => {
    const d = d3.select(g).datum();
    const rect = g.querySelector("rect");
    return {
      name: g.getAttribute("name"),
      function: d.data.node.name,
      width: Number(rect.getAttribute("width")),
      fill: rect.getAttribute("fill"),
      depth: d.depth,
      value: d.value,
    };
  }));
}
// Waits up to 5 s for fn(arg) to hold in the page; false (and the test goes on) if it never does.
async function waitUntil(page, fn, arg) {
  try {
    await page.waitForFunction(fn, arg, { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}
const drawn = (list) => list.filter((f) => f.width > 0);
const rootOf = (list) => list.find((f) => f.depth === 0);

try {
  // ---- exact profile ----
  const { page, url } = await open(exactPage);
  const chartWidth = await page.evaluate(() => Number(document.querySelector("#chart svg").getAttribute("width")));
  let list = await frames(page);
  check(drawn(list).length > 12, "frames are drawn", drawn(list).length);
  check(await page.evaluate(() => document.querySelector('#types button[aria-pressed="true"]').dataset.type) === "inuse_space",
    "inuse_space is shown first");
  const names = new Set(list.map((f) => f.function));
  for (const fn of ["main", "workload::BuildCache", "workload::CacheInsert",
    "workload::AllocateBuffer", "workload::Recurse"]) {
    check(names.has(fn), `frame ${fn} is drawn`, [...names]);
  }
  check(!names.has("workload::HandleRequests"), "freed allocations are not in use");
  const buildCache = list.find((f) => f.function === "workload::BuildCache");
  check(buildCache && buildCache.depth > 1 && buildCache.width < chartWidth - 1,
    "callers are above callees (BuildCache below main, not full width)", buildCache);
  const inlined = await page.evaluate(() => [...document.querySelectorAll("#chart g.frame")]
    .some((g) => d3.select(g).datum().data.node.inlined &&
                 d3.select(g).datum().data.node.name.includes("NewIndexNode")));
  check(inlined, "the inlined NewIndexNode has a frame of its own, marked inlined");

  // The sample-type switch re-renders without reloading: root value, label and summary change.
  const before = rootOf(list);
  const summaryBefore = await page.textContent("#summary");
  await page.evaluate(() => { window.__heaprecNotReloaded = true; });
  await page.click('#types button[data-type="alloc_space"]');
  check(await waitUntil(page, (old) => document.querySelector("#summary").textContent !== old, summaryBefore),
    "switching the sample type re-renders");
  await page.waitForTimeout(700);
  list = await frames(page);
  const after = rootOf(list);
  check(after.value > before.value, "alloc_space's root value exceeds inuse_space's", [before.value, after.value]);
  check(after.name !== before.name && /alloc_space/.test(after.name) && /inuse_space/.test(before.name),
    "the root frame's title names the sample type and its total", [before.name, after.name]);
  check(/^alloc_space: /.test(await page.textContent("#summary")), "the summary follows the switch",
    await page.textContent("#summary"));
  check(list.some((f) => f.function === "workload::HandleRequests" && f.width > 0),
    "freed allocations appear under alloc_space");
  check(await page.evaluate(() => window.__heaprecNotReloaded === true) && page.url() === url,
    "the switch did not reload the page");
  await page.click('#types button[data-type="inuse_objects"]');
  await waitUntil(page, () => /^inuse_objects: /.test(document.querySelector("#summary").textContent));
  await page.waitForTimeout(700);
  const objectsRoot = rootOf(await frames(page));
  check(objectsRoot.value < before.value && objectsRoot.value > 0,
    "inuse_objects counts objects, not bytes", [objectsRoot.value, before.value]);
  await page.click('#types button[data-type="inuse_space"]');
  await waitUntil(page, () => /^inuse_space: /.test(document.querySelector("#summary").textContent));
  await page.waitForTimeout(700);

  // Hover: function, file:line, bytes and objects; an exact profile has no intervals.
  await page.hover('#chart g.frame[name="workload::CacheInsert"]');
  await page.waitForSelector(".d3-flame-graph-tip", { state: "visible" });
  let tip = await page.textContent(".d3-flame-graph-tip");
  check(tip.includes("workload::CacheInsert") && /flame_workload\.cc:\d+/.test(tip),
    "hover shows the function and its file:line", tip);
  check(/inuse_space\s*[\d.]+ (KiB|MiB)/.test(tip) && /inuse_objects\s*[\d,]+/.test(tip),
    "hover shows bytes and objects", tip);
  check(!tip.includes("±") && !tip.includes("95%"), "no interval in exact mode", tip);
  await page.mouse.move(5, 5);

  // Click to zoom: the clicked frame takes the full width, its siblings vanish.
  await page.click('#chart g.frame[name="workload::BuildCache"]');
  await page.waitForTimeout(800);
  list = await frames(page);
  const zoomed = list.find((f) => f.function === "workload::BuildCache");
  check(Math.abs(zoomed.width - chartWidth) < 1, "a clicked frame zooms to the full width", [zoomed.width, chartWidth]);
  const recurse = list.find((f) => f.function === "workload::Recurse" && f.width > 0);
  check(!recurse, "frames outside the zoomed one are hidden", recurse);
  const child = list.find((f) => f.function === "workload::CacheInsert");
  check(child && Math.abs(child.width - chartWidth) < 1, "the zoomed frame's only callee is full width too", child);
  await page.click("#reset-zoom");
  await page.waitForTimeout(800);
  list = await frames(page);
  check(Math.abs(list.find((f) => f.function === "workload::BuildCache").width - buildCache.width) < 1,
    "reset zoom restores the widths");

  // Search highlights the matching frames only.
  await page.fill("#search", "AllocateBuffer");
  await page.waitForTimeout(400);
  list = drawn(await frames(page));
  const highlighted = list.filter((f) => f.fill.toLowerCase() === "#e600e6");
  check(highlighted.length >= 3, "search highlights frames", highlighted.length);
  check(highlighted.every((f) => f.function.includes("AllocateBuffer")), "only matching frames are highlighted",
    highlighted.map((f) => f.function));
  check(list.some((f) => f.function === "main" && f.fill.toLowerCase() !== "#e600e6"),
    "other frames keep their colour");
  check(/search "AllocateBuffer": \d+ frames/.test(await page.textContent("#details")),
    "the search result is summed up", await page.textContent("#details"));
  await page.click("#clear-search");
  await page.waitForTimeout(400);
  check(drawn(await frames(page)).every((f) => f.fill.toLowerCase() !== "#e600e6"), "clearing the search removes the highlight");
  await page.close();

  // ---- sampled profile: intervals ----
  const sampled = await open(sampledPage);
  check(drawn(await frames(sampled.page)).length > 8, "frames are drawn (sampled)");
  check(/±/.test(await sampled.page.textContent("#summary")), "the summary shows the total's interval",
    await sampled.page.textContent("#summary"));
  await sampled.page.hover('#chart g.frame[name="workload::BuildCache"]');
  await sampled.page.waitForSelector(".d3-flame-graph-tip", { state: "visible" });
  tip = await sampled.page.textContent(".d3-flame-graph-tip");
  check(/inuse_space\s*[\d.]+ (KiB|MiB) ± [\d.]+ (B|KiB|MiB)/.test(tip) &&
        /inuse_objects\s*[\d,]+ (± [\d,]+|\(95%)/.test(tip),
    "hover shows bytes and objects with their 95% intervals", tip);

  if (process.env.HEAPREC_UPDATE_SCREENSHOTS === "1" && args.screenshot) {
    // The README's picture: the whole graph, a search, and the tooltip of one frame.
    const shot = sampled.page;
    await shot.click("#reset-zoom");
    await shot.fill("#search", "Recurse");
    await shot.waitForTimeout(500);
    const height = await shot.evaluate(() => document.body.scrollHeight);
    await shot.setViewportSize({ width: 1280, height: Math.min(1000, height + 8) });
    await shot.waitForTimeout(700);
    await shot.hover('#chart g.frame[name="workload::NewIndexNode"]', { position: { x: 60, y: 9 } });
    await shot.waitForTimeout(400);
    fs.mkdirSync(path.dirname(args.screenshot), { recursive: true });
    await shot.screenshot({ path: args.screenshot });
    console.log(`wrote ${args.screenshot}`);
  }
  await sampled.page.close();

  const foreign = requests.filter((u) => u !== url && u !== sampled.url);
  check(foreign.length === 0, "the pages request nothing but themselves", foreign);
  check(errors.length === 0, "no script errors", errors);
} catch (e) {
  check(false, "the test ran to its end", String(e && e.stack || e));
} finally {
  await browser.close();
}
finish();
