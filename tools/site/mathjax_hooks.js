// Added to the MathJax configuration of conf.py (window.MathJax, set just before): record every
// MathJax error (TeX parse errors, math input/output errors, files it could not load) in
// window.opalgMath.errors and mark the end of the first typesetting with data-mathjax="done" on
// <html>, for tests/test_browser_site.py.  TeX errors still render (as mjx-merror elements).
window.opalgMath = {errors: [], done: false};
(function (mj) {
  function done() {
    opalgMath.done = true;
    document.documentElement.setAttribute("data-mathjax", "done");
  }
  mj.loader = mj.loader || {};
  mj.loader.failed = function (err) { opalgMath.errors.push("file load error: " + err.message); done(); };
  mj.tex = mj.tex || {};
  mj.tex.formatError = function (jax, err) {
    opalgMath.errors.push("TeX parse error: " + err.message);
    return jax.formatError(err);
  };
  mj.options = mj.options || {};
  mj.options.compileError = function (doc, math, err) {
    opalgMath.errors.push("Math input error: " + err.message + " in " + math.math);
    doc.compileError(math, err);
  };
  mj.options.typesetError = function (doc, math, err) {
    opalgMath.errors.push("Math output error: " + err.message + " in " + math.math);
    doc.typesetError(math, err);
  };
  mj.startup = {
    pageReady: function () {
      return MathJax.startup.defaultPageReady().then(done, function (err) {
        opalgMath.errors.push("MathJax startup error: " + ((err && err.message) || err));
        done();
      });
    }
  };
})(window.MathJax = window.MathJax || {});
