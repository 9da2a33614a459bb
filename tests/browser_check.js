// Injected by tests/test_browser.py at the start of <head> of a copy of a report: records
// console errors and failed loads from the start, and on load writes its checks' results as JSON
// into a pre element, id pfm-check (read back from chromium --dump-dom). The report itself has no script.
(function () {
  var errors = [];
  var oldError = console.error;
  console.error = function () { errors.push("console.error: " + Array.prototype.join.call(arguments, " ")); oldError.apply(console, arguments); };
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) { errors.push("failed to load <" + t.tagName.toLowerCase() + "> " + (t.src || t.href || "")); }
    else { errors.push("error: " + e.message); }
  }, true);
  window.addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + e.reason); });
  var TOLERANCE = 1.5;
  // how deep two convex quadrilaterals overlap (separating axis theorem): 0 when they do not
  function overlap(p, q) {
    var depth = Infinity;
    [p, q].forEach(function (poly) {
      for (var k = 0; k < 4; k++) {
        var a = poly[k], b = poly[(k + 1) % 4];
        var nx = a[1] - b[1], ny = b[0] - a[0], len = Math.hypot(nx, ny);
        if (len === 0) continue;
        nx /= len; ny /= len;
        var pp = p.map(function (v) { return v[0] * nx + v[1] * ny; });
        var qq = q.map(function (v) { return v[0] * nx + v[1] * ny; });
        var d = Math.min(Math.max.apply(null, pp), Math.max.apply(null, qq)) - Math.max(Math.min.apply(null, pp), Math.min.apply(null, qq));
        depth = Math.min(depth, d);
      }
    });
    return Math.max(0, depth);
  }
  function run() {
    var doc = document.documentElement;
    var out = {width: window.innerWidth, scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth,
               scrollHeight: doc.scrollHeight,
               errors: errors, overlaps: [], empty: [], svgs: 0, wide: []};
    var svgs = document.querySelectorAll("svg");
    out.svgs = svgs.length;
    svgs.forEach(function (svg, si) {
      var r = svg.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) out.empty.push("svg #" + si + ": zero size");
      else if (!svg.querySelector("path, rect, line, polyline, polygon, circle, ellipse, use, image")) {
        out.empty.push("svg #" + si + ": draws nothing");
      }
      if (r.right > doc.clientWidth + 0.5) out.wide.push("svg #" + si + " right edge " + r.right);
      var texts = Array.prototype.filter.call(svg.querySelectorAll("text"), function (t) {
        return t.textContent.trim() !== "";
      });
      var quads = texts.map(function (t) {
        var b = t.getBBox(), m = t.getScreenCTM();
        return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(function (p) {
          return [m.a * p[0] + m.c * p[1] + m.e, m.b * p[0] + m.d * p[1] + m.f];
        });
      });
      for (var i = 0; i < quads.length; i++) {
        for (var j = i + 1; j < quads.length; j++) {
          var depth = overlap(quads[i], quads[j]);
          if (depth > TOLERANCE) out.overlaps.push({svg: si, section: (svg.closest("section") || {}).id || "", a: texts[i].textContent, b: texts[j].textContent, depth: Math.round(depth * 10) / 10});
        }
      }
    });
    document.querySelectorAll("img").forEach(function (img, i) {
      if (!img.complete || img.naturalWidth === 0) out.empty.push("img #" + i + ": not loaded, zero size");
    });
    // elements reaching past the right edge, outside a box that scrolls on its own (the
    // outermost such element only; the insides of an SVG scale with it)
    document.querySelectorAll(".pfm-report *").forEach(function (el) {
      if (el.closest(".scroll") || (el.closest("svg") && el.tagName.toLowerCase() !== "svg")) return;
      var r = el.getBoundingClientRect();
      var parent = el.parentElement;
      var parentWide = parent && parent.getBoundingClientRect().right > doc.clientWidth + 0.5;
      if (r.right > doc.clientWidth + 0.5 && !parentWide) {
        out.wide.push("<" + el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? " class=" + el.className : "") + "> right edge " + Math.round(r.right) + " px: " + el.textContent.slice(0, 60));
      }
    });
    var pre = document.createElement("pre");
    pre.id = "pfm-check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  window.addEventListener("load", run);
})();
