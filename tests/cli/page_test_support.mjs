// What the browser tests of heaprec's pages share (flame_page_test.mjs, leaks_page_test.mjs): their
// command line, a check counter that prints one line per check, a fresh work directory, and
// Debian's Chromium in headless mode through playwright-core, offline.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

// "--name value" pairs into an object; exits 2 naming the first of `required` that is missing.
// The work directory is made absolute and emptied.
export function parseArgs(testName, required) {
  const args = {};
  for (let i = 2; i < process.argv.length; i += 2) {
    args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
  }
  for (const name of required) {
    if (!args[name]) {
      console.error(`${testName}: missing --${name}`);
      process.exit(2);
    }
  }
  args.workdir = path.resolve(args.workdir);
  fs.rmSync(args.workdir, { recursive: true, force: true });
  fs.mkdirSync(args.workdir, { recursive: true });
  return args;
}

// check(condition, message, detail) prints "ok - ..." or "FAIL - ...: detail"; finish() prints the
// counts and exits 1 on any failure (or when nothing was checked).
export function makeChecks() {
  let passed = 0;
  let failed = 0;
  return {
    check(condition, message, detail) {
      if (condition) {
        ++passed;
        console.log(`ok - ${message}`);
      } else {
        ++failed;
        console.log(`FAIL - ${message}${detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
      }
    },
    finish() {
      console.log(`${passed} passed, ${failed} failed`);
      process.exit(failed === 0 && passed > 0 ? 0 : 1);
    },
  };
}

// A persistent headless Chromium context with its own profile directory; close() also removes it.
export async function launchBrowser(args, viewport) {
  const require = createRequire(path.resolve(args["node-modules"], "noop.js"));
  const { chromium } = require("playwright-core");
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "heaprec-page-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: args.chromium,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport,
    offline: true,
  });
  context.setDefaultTimeout(15000);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
