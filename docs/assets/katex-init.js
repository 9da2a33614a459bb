// Render the math that pymdownx.arithmatex (generic mode) wraps in .arithmatex elements with KaTeX.
// KaTeX is vendored under docs/assets/katex, so the built site renders math offline.
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
});
