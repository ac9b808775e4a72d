// Links that land on their section (issue 32). The article's off-screen blocks are laid out lazily
// (attnstat-render.css, `content-visibility: auto`), so the browser only knows estimated heights for
// what lies above a target, and a jump to `#section` lands where the estimate puts it: up to screens away.
// When the page is opened at an anchor, or an anchor is followed, this script switches the lazy layout
// off (class `attnstat-full-layout` on <html>: every block is laid out for real) and scrolls to the target
// again once the layout, the fonts and the images have settled. A page opened without an anchor keeps
// the fast lazy layout.
(function () {
  const FULL = "attnstat-full-layout";
  let target = null, userScrolled = false;
  function land() {
    if (!target || userScrolled) return;
    const el = document.getElementById(target);
    if (el) el.scrollIntoView({ block: "start" });
  }
  function follow(id) {
    if (!id) return;
    target = id; userScrolled = false;
    document.documentElement.classList.add(FULL);
    land();
    requestAnimationFrame(() => requestAnimationFrame(land));
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(land);
  }
  function fromHash() { if (location.hash.length > 1) follow(decodeURIComponent(location.hash.slice(1))); }
  // a reader who scrolls or types takes over: no more programmatic jumps
  ["wheel", "touchmove", "keydown", "mousedown"].forEach((ev) =>
    window.addEventListener(ev, () => { userScrolled = true; }, { passive: true, capture: true }));
  document.addEventListener("DOMContentLoaded", fromHash);
  window.addEventListener("load", () => { fromHash(); setTimeout(land, 300); });
  window.addEventListener("hashchange", fromHash);
})();
