// Folded blocks (derivation dropdowns, collapsed code cells) are shipped as inert text and turned into HTML only
// when the reader opens them (tools/build_book.py, `lazy_folds`): the browser does not parse and lay out
// hundreds of formulas and highlighted code lines that a reader never opens. A link to an anchor inside a fold
// opens it.
(function () {
  const SRC = 'script[type="text/x-attnstat-fold"]';
  function fill(box) {
    const s = box.querySelector(":scope > " + SRC);
    if (!s) return;
    const html = s.textContent.replace(/<\\\/script/gi, "</script").replace(/<\\!--/g, "<!--");
    s.remove();
    box.insertAdjacentHTML("beforeend", html);
    addCopyButtons(box);
  }
  // sphinx-copybutton adds its buttons once, at page load, so code that arrives later (a fold opened by the reader)
  // gets them here: same class, same target attribute; ClipboardJS listens on the document for any `.copybtn`.
  let copyId = 0;
  const ICON = '<svg xmlns="http://www.w3.org/2000/svg" class="icon icon-tabler icon-tabler-copy" width="44" height="44" ' +
    'viewBox="0 0 24 24" stroke-width="1.5" stroke="#000000" fill="none" stroke-linecap="round" stroke-linejoin="round">' +
    '<title>Copy to clipboard</title><path stroke="none" d="M0 0h24v24H0z" fill="none"/>' +
    '<rect x="8" y="8" width="12" height="12" rx="2" /><path d="M16 8v-2a2 2 0 0 0 -2 -2h-8a2 2 0 0 0 -2 2v8a2 2 0 0 0 2 2h2" /></svg>';
  function addCopyButtons(root) {
    root.querySelectorAll("div.highlight pre").forEach((pre) => {
      const next = pre.nextElementSibling;
      if (next && next.classList.contains("copybtn")) return;
      if (!pre.id) pre.id = "attnstat-fold-code-" + (copyId++);
      pre.insertAdjacentHTML("afterend", '<button class="copybtn o-tooltip--left" data-tooltip="Copy" ' +
        'data-clipboard-target="#' + pre.id + '">' + ICON + '</button>');
    });
  }
  window.attnstatAddCopyButtons = addCopyButtons;
  // A fold opened from the URL hash before sphinx-copybutton's own pass gets a second button from it: keep one.
  window.addEventListener("load", () => setTimeout(() => document.querySelectorAll(".copybtn + .copybtn").forEach((b) => b.remove()), 1500));
  function fillIn(root) { root.querySelectorAll(".attnstat-lazy").forEach(fill); }
  window.attnstatExpandFolds = () => { let n; do { n = document.querySelectorAll(SRC).length; fillIn(document); } while (n && document.querySelectorAll(SRC).length); };
  document.addEventListener("toggle", (e) => {
    const d = e.target;
    if (d && d.tagName === "DETAILS" && d.open) d.querySelectorAll(":scope > .attnstat-lazy").forEach(fill);
  }, true);
  function openHash() {
    if (!location.hash) return;
    const id = decodeURIComponent(location.hash.slice(1));
    if (document.getElementById(id)) return;
    for (const s of document.querySelectorAll(SRC)) {
      if (!s.textContent.includes('id="' + id + '"')) continue;
      const box = s.parentElement; fill(box);
      const d = box.closest("details"); if (d) d.open = true;
      const el = document.getElementById(id); if (el) el.scrollIntoView();
      return;
    }
  }
  document.addEventListener("DOMContentLoaded", openHash);
  window.addEventListener("hashchange", openHash);
})();
