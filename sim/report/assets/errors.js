// The first script of every shardsim report: it records each JavaScript error of the page
// (uncaught errors, unhandled promise rejections, console.error) into <ul id="js-errors">, whose
// data-count the browser test reads, so that a broken chart is never silent.
(function () {
  'use strict';
  var errors = [];
  function show() {
    var box = document.getElementById('js-errors');
    if (!box) return;
    box.setAttribute('data-count', String(errors.length));
    box.hidden = errors.length === 0;
    box.textContent = '';
    for (var i = 0; i < errors.length; i++) {
      var li = document.createElement('li');
      li.textContent = 'script error: ' + errors[i];
      box.appendChild(li);
    }
  }
  function record(message) {
    errors.push(String(message));
    show();
  }
  window.addEventListener('error', function (e) {
    record((e.message || 'error') + ' (' + (e.filename || 'inline') + ':' + (e.lineno || 0) + ':' +
           (e.colno || 0) + ')');
  });
  window.addEventListener('unhandledrejection', function (e) {
    var r = e.reason;
    record('unhandled rejection: ' + (r && r.message ? r.message : String(r)));
  });
  var consoleError = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
  window.shardsimRecordError = record;
  document.addEventListener('DOMContentLoaded', show);
})();
