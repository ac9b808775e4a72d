// Render TeX to MathJax CHTML markup at build time (called by tools/build_book.py), so that no page
// of the book typesets in the browser: the pages load one stylesheet and the MathJax woff fonts only.
//
//   node tools/prerender_math.js MODULES_DIR < in.json > out.json
//
// in.json:  {"items": [[tex, display], ...], "fontURL": "mathjax-fonts"}
// out.json: {"html": [markup, ...], "errors": [[index, message], ...], "css": "..."}
// One MathJax document renders every formula of the book, so the stylesheet (adaptive CSS: only the
// characters that occur in the whole book: tools/build_book.py sends every formula it has ever rendered into this
// output folder, see MATH_ITEMS) covers all pages and is written once.
const path = require("path");
const modules = path.resolve(process.argv[2]);
const req = (p) => require(path.join(modules, "mathjax-full", "js", p));
const { mathjax } = req("mathjax.js");
const { TeX } = req("input/tex.js");
const { CHTML } = req("output/chtml.js");
const { liteAdaptor } = req("adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = req("handlers/html.js");
const { AllPackages } = req("input/tex/AllPackages.js");

let raw = "";
process.stdin.on("data", (d) => (raw += d));
process.stdin.on("end", () => {
  const input = JSON.parse(raw);
  const adaptor = liteAdaptor();
  RegisterHTMLHandler(adaptor);
  // noundefined/noerrors are left out: an unknown macro or a TeX error is reported, not rendered red
  const packages = AllPackages.filter((p) => p !== "noundefined" && p !== "noerrors" && p !== "bussproofs");
  const tex = new TeX({ packages, formatError: (jax, err) => { throw err; } });
  const chtml = new CHTML({ fontURL: input.fontURL || "mathjax-fonts", adaptiveCSS: true });
  const doc = mathjax.document("", { InputJax: tex, OutputJax: chtml });
  const html = [], errors = [];
  input.items.forEach(([src, display], i) => {
    try {
      const node = doc.convert(src, { display: !!display, em: 16, ex: 8, containerWidth: 80 * 16 });
      html.push(adaptor.outerHTML(node));
    } catch (e) {
      errors.push([i, String((e && e.message) || e).slice(0, 200)]);
      html.push(null);
    }
  });
  const css = adaptor.textContent(chtml.styleSheet(doc));
  process.stdout.write(JSON.stringify({ html, errors, css }));
});
