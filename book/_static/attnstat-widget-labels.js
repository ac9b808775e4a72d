// The ipywidgets embedder typesets widget labels with the MathJax 2 API (MathJax.Hub.Queue); the
// book loads MathJax 3. Provide that call on top of MathJax 3 (widgets render on the window's load
// event, after this runs on DOMContentLoaded), so labels such as "$\alpha$" are typeset and no error
// is logged.
(function () {
  function install() {
    const mj = window.MathJax;
    if (!mj || mj.Hub) return;
    mj.Hub = {
      Queue: function () {
        for (const job of arguments) {
          const el = Array.isArray(job) && job[0] === "Typeset" ? job[2] : null;
          const ready = (mj.startup && mj.startup.promise) || Promise.resolve();
          ready.then(() => mj.typesetPromise ? mj.typesetPromise(el ? [el] : undefined) : null).catch(() => {});
        }
      },
    };
  }
  document.addEventListener("DOMContentLoaded", install);
})();
