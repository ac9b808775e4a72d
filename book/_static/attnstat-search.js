// Search result snippets without raw TeX: Sphinx builds a snippet from the text of the page, where
// math is still TeX source (MathJax only typesets the page that is open). Replace inline and display
// math by a plain-text rendering (Greek letters and common symbols as Unicode).
(function () {
  const SYM = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", zeta: "ζ",
    eta: "η", theta: "θ", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", xi: "ξ", pi: "π", rho: "ρ",
    sigma: "σ", tau: "τ", phi: "φ", varphi: "φ", chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ",
    Delta: "Δ", Theta: "Θ", Lambda: "Λ", Sigma: "Σ", Phi: "Φ", Psi: "Ψ", Omega: "Ω", infty: "∞",
    to: "→", le: "≤", leq: "≤", ge: "≥", geq: "≥", approx: "≈", sim: "∼", times: "×", cdot: "·",
    pm: "±", in: "∈", sum: "∑", int: "∫", partial: "∂", ell: "ℓ", top: "ᵀ", star: "*"};
  function tex(s) {
    return s.replace(/\\(mathrm|mathbf|mathit|boldsymbol|text|operatorname|mathcal|hat|bar|tilde)\s*\{([^{}]*)\}/g, "$2")
            .replace(/\\mathbb\s*\{?E\}?/g, "𝔼").replace(/\\mathbb\s*\{?R\}?/g, "ℝ")
            .replace(/\\([A-Za-z]+)/g, (m, w) => SYM[w] !== undefined ? SYM[w] : w)
            .replace(/\\[,;! ]/g, " ").replace(/[{}\\]/g, "");
  }
  function plain(text) {
    return text.replace(/\\\(([\s\S]*?)\\\)/g, (m, t) => tex(t))
               .replace(/\\\[([\s\S]*?)\\\]/g, (m, t) => tex(t))
               .replace(/\$\$([\s\S]*?)\$\$/g, (m, t) => tex(t))
               .replace(/\\begin\{(\w+\*?)\}([\s\S]*?)\\end\{\1\}/g, (m, e, t) => tex(t));
  }
  document.addEventListener("DOMContentLoaded", () => {
    if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
    const original = Search.htmlToText;
    Search.htmlToText = (html, anchor) => plain(original(html, anchor));
  });
})();
