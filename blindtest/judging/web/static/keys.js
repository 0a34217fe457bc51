// The judging page's keys: 1/2/3 press the option buttons, L/R/T choose in a preference
// trial (then the reason box takes the typing), C continues after a break. A form is sent
// once: a second click or key press while it is on its way does nothing (the server ignores
// a repeated pick as well). Served by bt-judge itself; nothing is fetched from elsewhere.
(function () {
  "use strict";
  var sent = false;
  document.addEventListener("submit", function (event) {
    if (sent) {
      event.preventDefault();
      return;
    }
    sent = true;
  });
  window.addEventListener("pageshow", function () {
    sent = false;
  });
  function typing(target) {
    if (!target || !target.tagName) {
      return false;
    }
    var tag = target.tagName.toLowerCase();
    return tag === "textarea" || (tag === "input" && target.type === "text");
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
      return;
    }
    var key = (event.key || "").toLowerCase();
    if (key.length !== 1) {
      return;
    }
    var button = document.querySelector('button[data-key="' + key + '"]');
    if (button) {
      event.preventDefault();
      button.click();
      return;
    }
    var radio = document.querySelector('input[type="radio"][data-key="' + key + '"]');
    if (radio) {
      event.preventDefault();
      radio.checked = true;
      var reason = document.getElementById("reason");
      if (reason) {
        reason.focus();
      }
    }
  });
  // Said once the keys above are listening: keys.js is deferred, so on a slow machine the
  // page can show its text before a key press would do anything (the browser tests wait
  // for this rather than for the text).
  document.documentElement.setAttribute("data-keys", "ready");
})();
