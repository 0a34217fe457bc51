// The judging page's keys and clicks. 1/2/3 press the option buttons; in a preference trial
// L/R/T (or 1/2) choose and never type into the reason box (Tab goes to the box, Esc leaves
// it); Y/N answer the extra question marked on the page, then the next; Enter submits from
// anywhere; U takes back the last pick; C continues after a break. Clicking a response
// selects it (a triangle's still waits for Enter or its button). A form is sent once: a
// second click or key press while it is on its way does nothing (the server ignores a
// repeated pick as well). Served by bt-judge itself; nothing is fetched from elsewhere.
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
  var answer = document.getElementById("answer");
  // What a pick is (Protocol.pick_kind): a side (left/right/tie), a position, or a nickname.
  var pickKind = answer ? answer.getAttribute("data-pick") : "";

  function typing(target) {
    if (!target || !target.tagName) {
      return false;
    }
    var tag = target.tagName.toLowerCase();
    return tag === "textarea" || (tag === "input" && target.type === "text");
  }

  // ------------------------------------------------------------------ the chosen response
  function mark(option) {
    var all = document.querySelectorAll(".option");
    for (var i = 0; i < all.length; i++) {
      all[i].classList.toggle("chosen", all[i].getAttribute("data-option") === option);
    }
  }
  function chosenOption() {
    var radio = document.querySelector('input[name="pick"]:checked');
    if (!radio || !radio.closest("label")) {
      return "";
    }
    return radio.closest("label").getAttribute("data-option") || "";
  }
  if (answer) {
    answer.addEventListener("change", function () {
      if (pickKind === "side") {
        mark(chosenOption());
      }
      markQuestion();
    });
  }
  var triangleChoice = "";
  function selectOption(option) {
    if (pickKind === "side") {
      var label = document.querySelector('#choices label[data-option="' + option + '"]');
      if (label) {
        label.querySelector("input").checked = true;
        mark(option);
      }
    } else if (pickKind === "position") {
      var button = document.querySelector('button[data-option="' + option + '"]');
      if (button) {
        triangleChoice = option;
        mark(option);
        button.focus();
      }
    }
  }
  var options = document.querySelectorAll(".option");
  for (var o = 0; o < options.length; o++) {
    options[o].addEventListener("click", function (event) {
      var selection = window.getSelection ? String(window.getSelection()) : "";
      if (selection || (event.target.closest && event.target.closest("a"))) {
        return; // selecting text or following a link is not a choice
      }
      selectOption(this.getAttribute("data-option"));
    });
  }

  // ------------------------------------------------------------------ the extra questions
  var asks = document.querySelectorAll(".ask");
  function unanswered(ask) {
    return !ask.querySelector("input:checked");
  }
  function currentQuestion() {
    for (var i = 0; i < asks.length; i++) {
      if (unanswered(asks[i])) {
        return asks[i];
      }
    }
    return null;
  }
  function markQuestion() {
    var now = currentQuestion();
    for (var i = 0; i < asks.length; i++) {
      asks[i].classList.toggle("current", asks[i] === now);
    }
  }
  markQuestion();

  // ------------------------------------------------------------------ keys
  function submitAnswer() {
    if (!answer) {
      return;
    }
    if (pickKind === "position") {
      if (triangleChoice) {
        document.querySelector('button[data-option="' + triangleChoice + '"]').click();
      }
      return;
    }
    var button = document.getElementById("submit");
    if (button) {
      if (answer.requestSubmit) {
        answer.requestSubmit(button);
      } else {
        button.click();
      }
    }
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur(); // out of the box: the keys choose again
        var checked = document.querySelector('input[name="pick"]:checked');
        if (checked) {
          checked.focus();
        }
      }
      return; // Enter in a text box submits its form by itself
    }
    if (event.key === "Enter") {
      var tag = (event.target.tagName || "").toLowerCase();
      if (tag === "button" || tag === "a" || tag === "summary" || tag === "textarea") {
        return; // Enter on a button presses that button
      }
      if (answer) {
        event.preventDefault();
        submitAnswer();
      }
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
    var radio = document.querySelector(
      'input[type="radio"][data-key="' + key + '"], input[type="radio"][data-key2="' + key + '"]'
    );
    if (radio) {
      event.preventDefault();
      radio.checked = true;
      radio.focus(); // Tab goes on to the reason box
      mark(chosenOption());
      return;
    }
    if (key === "y" || key === "n") {
      var ask = currentQuestion();
      if (ask) {
        event.preventDefault();
        ask.querySelector('input[value="' + (key === "y" ? "yes" : "no") + '"]').checked = true;
        markQuestion();
      }
    }
  });
  if (pickKind === "side") {
    mark(chosenOption());
  }
  // Said once the keys above are listening: keys.js is deferred, so on a slow machine the
  // page can show its text before a key press would do anything (the browser tests wait
  // for this rather than for the text).
  document.documentElement.setAttribute("data-keys", "ready");
})();
