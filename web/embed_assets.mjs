// Generates the C++ source that embeds one of heaprec's self-contained pages: a template from web/
// with d3-flame-graph's and its d3 modules' minified JS and CSS inlined (and uPlot's, when the
// template asks for it), taken from a node_modules tree that `npm ci` installed from
// web/package-lock.json.
//
//   node embed_assets.mjs TEMPLATE NODE_MODULES OUTPUT.cc [FUNCTION HEADER DATA_MARKER]
//
// FUNCTION (default FlamePageTemplate) is the C++ function returning the page, declared in HEADER
// (default render/flame_assets.h); DATA_MARKER (default @HEAPREC_FLAME_DATA@) must appear once in
// the template, where the page's JSON goes. Run by src/render/flame.cmake and ui.cmake at build
// time. Fails (exit 1, one line on stderr) when a package or a marker is missing, or when an asset
// could end the <script> element it is inlined into.
import fs from "node:fs";
import path from "node:path";

const [templatePath, nodeModules, outputPath, functionName = "FlamePageTemplate",
  headerName = "render/flame_assets.h", dataMarker = "@HEAPREC_FLAME_DATA@"] = process.argv.slice(2);
if (!outputPath) {
  console.error("usage: node embed_assets.mjs TEMPLATE NODE_MODULES OUTPUT.cc [FUNCTION HEADER DATA_MARKER]");
  process.exit(2);
}

function fail(message) {
  console.error("embed_assets: " + message);
  process.exit(1);
}

// The directory of package `name` as Node would find it from `fromDir` (nested, then hoisted).
function packageDir(name, fromDir) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === path.dirname(dir) || path.resolve(dir) === path.resolve(nodeModules, "..")) break;
  }
  const top = path.join(nodeModules, name);
  if (fs.existsSync(path.join(top, "package.json"))) return top;
  fail(`package ${name} is not installed in ${nodeModules} (did npm ci run?)`);
}

function readPackage(dir) {
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
}

function readAsset(file) {
  if (!fs.existsSync(file)) fail(`missing ${file}`);
  const text = fs.readFileSync(file, "utf8").replace(/\r\n?/g, "\n");
  if (/<\/script|<!--/i.test(text)) fail(`${file} contains "</script" or "<!--"`);
  if (text.includes("@HEAPREC_")) fail(`${file} contains a heaprec template marker`);
  return text;
}

function license(dir) {
  for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt", "license"]) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
  }
  return "";
}

// d3-flame-graph's UMD build reads the global `d3`: load the d3 modules it depends on (and theirs)
// first, each after its own dependencies, from their UMD builds (which extend the global `d3`).
const flameDir = packageDir("d3-flame-graph", nodeModules);
const flamePackage = readPackage(flameDir);
const ordered = [];
const visiting = new Set();
const done = new Set();
function visit(name, fromDir) {
  const dir = packageDir(name, fromDir);
  const key = path.resolve(dir);
  if (done.has(key)) return;
  if (visiting.has(key)) fail(`dependency cycle at ${name}`);
  visiting.add(key);
  const pkg = readPackage(dir);
  for (const dep of Object.keys(pkg.dependencies || {}).sort()) visit(dep, dir);
  visiting.delete(key);
  done.add(key);
  ordered.push({ name, dir, pkg });
}
for (const dep of Object.keys(flamePackage.dependencies || {}).sort()) visit(dep, flameDir);

const licenses = new Map();  // license text -> packages under it
function noteLicense(entry) {
  const text = license(entry.dir);
  const id = `${entry.name}@${entry.pkg.version} (${entry.pkg.license || "see package"})`;
  if (!licenses.has(text)) licenses.set(text, []);
  licenses.get(text).push(id);
}

let d3Js = "";
for (const entry of ordered) {
  const main = entry.pkg.unpkg || entry.pkg.jsdelivr || `dist/${entry.name}.min.js`;
  d3Js += `/*! ${entry.name}@${entry.pkg.version} */\n` + readAsset(path.join(entry.dir, main)) + "\n";
  noteLicense(entry);
}
const flameEntry = { name: "d3-flame-graph", dir: flameDir, pkg: flamePackage };
noteLicense(flameEntry);
let flameJs = `/*! d3-flame-graph@${flamePackage.version} */\n` +
  readAsset(path.join(flameDir, "dist", "d3-flamegraph.umd.min.js")) + "\n";
const flameCss = readAsset(path.join(flameDir, "dist", "d3-flamegraph.css"));
let notices = "/*! Third-party software in this page, and its licenses:\n";
for (const [text, ids] of licenses) {
  notices += "\n" + ids.join(", ") + ":\n\n" + (text || "(no license file)").replace(/\*\//g, "* /") + "\n";
}
notices += "*/\n";
flameJs = notices + flameJs;

let page = fs.readFileSync(templatePath, "utf8").replace(/\r\n?/g, "\n");
const assets = [
  ["/*@HEAPREC_D3_JS@*/", d3Js],
  ["/*@HEAPREC_FLAMEGRAPH_JS@*/", flameJs],
  ["/*@HEAPREC_FLAMEGRAPH_CSS@*/", flameCss],
];
// uPlot (the ui page's timeline), only where the template has its markers.
const usesUplot = page.includes("/*@HEAPREC_UPLOT_JS@*/");
let uplotVersion = "";
if (usesUplot) {
  const dir = packageDir("uplot", nodeModules);
  const pkg = readPackage(dir);
  uplotVersion = `uplot@${pkg.version}`;
  const notice = `/*! ${uplotVersion} (${pkg.license}):\n\n` + license(dir).replace(/\*\//g, "* /") + "\n*/\n";
  assets.push(["/*@HEAPREC_UPLOT_JS@*/", notice + readAsset(path.join(dir, "dist", "uPlot.iife.min.js"))]);
  assets.push(["/*@HEAPREC_UPLOT_CSS@*/", readAsset(path.join(dir, "dist", "uPlot.min.css"))]);
}
for (const [marker, text] of assets) {
  const at = page.indexOf(marker);
  if (at < 0 || page.indexOf(marker, at + 1) >= 0) fail(`${templatePath}: ${marker} must appear once`);
  page = page.slice(0, at) + text + page.slice(at + marker.length);
}
if (page.split(dataMarker).length !== 2) fail(`${templatePath}: ${dataMarker} must appear once`);

// Raw string literals of at most 16 KiB each (some compilers limit a literal to 64 KiB).
const delimiter = "hrflame";
const chunks = [];
const bytes = Buffer.from(page, "utf8");
for (let at = 0; at < bytes.length; at += 16384) {
  const chunk = bytes.subarray(at, at + 16384).toString("latin1");
  if (chunk.includes(`)${delimiter}"`)) fail(`the page contains the raw-string delimiter`);
  chunks.push(chunk);
}
const source =
  `// Generated by web/embed_assets.mjs from web/${path.basename(templatePath)} and the npm packages\n` +
  `// ${[...ordered.map((e) => `${e.name}@${e.pkg.version}`), `d3-flame-graph@${flamePackage.version}`,
    ...(usesUplot ? [uplotVersion] : [])].join(", ")}.\n` +
  `// Do not edit.\n` +
  `#include <string>\n\n#include "${headerName}"\n\nnamespace heaprec::render {\nnamespace {\n\n` +
  `constexpr std::string_view kChunks[] = {\n` +
  chunks.map((c) => `R"${delimiter}(${c})${delimiter}"`).join(",\n") +
  `};\n\n}  // namespace\n\n` +
  `std::string_view ${functionName}() {\n` +
  `  static const std::string page = [] {\n` +
  `    std::string s;\n    s.reserve(${bytes.length});\n` +
  `    for (std::string_view chunk : kChunks) s.append(chunk);\n    return s;\n  }();\n` +
  `  return page;\n}\n\n}  // namespace heaprec::render\n`;

// The chunks were decoded as latin1 so that a split inside a UTF-8 sequence survives: write the
// source back byte for byte.
const output = Buffer.from(source, "latin1");
if (!fs.existsSync(outputPath) || !fs.readFileSync(outputPath).equals(output)) {
  fs.mkdirSync(path.dirname(outputPath), { recursive: true });
  fs.writeFileSync(outputPath + ".tmp", output);
  fs.renameSync(outputPath + ".tmp", outputPath);
}
