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
  }
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
