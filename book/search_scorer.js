// Search scorer of the attnstat book (Sphinx `html_search_scorer`, inlined into language_data.js of the search page).
// Sphinx's default gives every page that contains a word the same score (5, or 15 if the word is in any of its
// headings), so the chapter that proves an identity ranks among all the pages that mention it. Here a result is
// re-scored from the page title and the section headings that contain the query: the page whose title names it
// first, then the pages whose headings name it (a short heading such as "The Nishimori identity" counts more than
// a long one that mentions it in passing), then plain mentions.
var Scorer = {
  objNameMatch: 11, objPartialMatch: 6, objPrio: {0: 15, 1: 5, 2: -5}, objPrioDefault: 0,
  title: 15, partialTitle: 7, term: 5, partialTerm: 2,
  score: function (result) {
    const [docname, title, anchor, descr, score] = result;
    let q = "";
    try { q = (new URLSearchParams(window.location.search).get("q") || "").toLowerCase().trim(); } catch (e) {}
    const words = q.split(/\s+/).filter((w) => w.length > 2);
    if (!words.length || typeof Search === "undefined" || !Search._index) return score;
    const index = Search._index, file = index.docnames.indexOf(docname);
    if (file < 0) return score;
    const has = (t) => words.every((w) => t.toLowerCase().includes(w));
    let boost = 0;
    const pageTitle = index.titles[file] || "";
    if (has(pageTitle)) boost += 100;
    // section headings of this page that contain every query word, weighted by how much of the heading the query is
    for (const [heading, where] of Object.entries(index.alltitles || {})) {
      if (!has(heading)) continue;
      for (const [f, id] of where) {
        if (f !== file || id === null) continue;
        const weight = 20 * Math.min(1, q.length / Math.max(heading.length, 1)) + 10;
        // a result that points at that very heading gets the full weight, the page's other results a share
        boost = Math.max(boost, anchor === "#" + id ? weight + 10 : weight);
      }
    }
    return score + boost;
  },
};
