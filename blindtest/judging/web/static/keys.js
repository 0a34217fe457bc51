// The judging page's keys, clicks and sending. 1/2/3 press the option buttons; in a preference
// trial L/R/T/X (or 1/2) choose and never type into the reason box (Tab goes to the box, Esc
// leaves it); Y/N answer the extra question marked on the page, then the next; Enter submits
// from anywhere; U takes back the last pick; S skips the comparison for now; H shows the picks
// so far (each can be changed there); ? opens the help; C continues after a break; B or Esc
// goes back from the history, Esc cancels a change. Clicking a response selects it (a
// triangle's still waits for Enter or its button).
//
// Every form is sent by this script (a page without scripts sends the same forms itself): a
// pick is kept in this tab (sessionStorage) until bt-judge says it is saved, with "not saved
// yet" on the page while bt-judge does not answer (stopped, restarting, a laptop lid), and is
// sent again until it does. Each pick carries an id made here, so a pick sent twice (its reply
// lost) is recorded once. A form is sent once: a second click or key press while it is on its
// way does nothing, and the second click of a double click never sends one (on the next
// trial's page, where it may land). A part of the answer left out is said next to it, never
// in a browser bubble. What was done ("saved", "taken back") is said in the page's live
// region after the next page loads. Served by bt-judge itself; nothing is fetched from elsewhere.
(function () {
  "use strict";
  var base = document.body.getAttribute("data-base") || "";
  var PENDING = "blindtest:pending:" + base;
  var ANNOUNCE = "blindtest:announce:" + base;
  var busy = false;
  var answer = document.getElementById("answer");
  // What a pick is (Protocol.pick_kind): a side (left/right/tie), a position, or a nickname.
  var pickKind = answer ? answer.getAttribute("data-pick") : "";
  var status = document.getElementById("status");

  function say(text, pending) {
    if (!status) {
      return;
    }
    status.textContent = text;
    status.classList.toggle("pending", !!pending);
    status.classList.toggle("said", !!text && !pending);
  }
  function store(key, value) {
    try {
      if (value === null) {
        window.sessionStorage.removeItem(key);
      } else {
        window.sessionStorage.setItem(key, value);
      }
    } catch (e) {
      // storage refused (a private window's quota): the pick is still kept while the page is
    }
  }
  function stored(key) {
    try {
      return window.sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  }
  function newId() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    var id = "p";
    for (var i = 0; i < bytes.length; i++) {
      id += (bytes[i] + 256).toString(16).slice(1);
    }
    return id;
  }
  if (answer) {
    var idField = document.createElement("input");
    idField.type = "hidden";
    idField.name = "pick_id";
    idField.value = newId();
    answer.appendChild(idField);
  }

  // ------------------------------------------------------------------ sending
  var WORDS = {
    saved: "Saved.",
    changed: "Change saved.",
    "taken back": "Taken back: the comparison is shown again, your answer filled in.",
    skipped: "Skipped: it comes back after the others.",
    stale:
      "Not recorded: that page was out of date. This is the comparison asked now."
  };
  var delay = 1000;
  var timer = null;

  function fields(form, submitter) {
    var data = new FormData(form);
    var list = [];
    data.forEach(function (value, key) {
      list.push([key, String(value)]);
    });
    if (submitter && submitter.name && submitter.form === form) {
      list.push([submitter.name, submitter.value]);
    }
    return list;
  }
  function trialOf(list) {
    for (var i = 0; i < list.length; i++) {
      if (list[i][0] === "change" || list[i][0] === "trial") {
        return list[i][1];
      }
    }
    return "";
  }
  function waiting(entry) {
    var what = entry.kind === "pick" ? "Your answer for trial " + entry.trial : "This";
    say(
      "Not saved yet: bt-judge is not answering. " + what + " is kept in this page and is " +
        "sent as soon as bt-judge answers again (leave this page open).",
      true
    );
    var button = document.getElementById("submit");
    if (button && entry.kind === "pick") {
      button.setAttribute("aria-busy", "true");
      button.classList.add("pending");
    }
  }
  function arrived(entry, reply) {
    if (entry.kind === "pick") {
      store(PENDING, null);
    }
    store(ANNOUNCE, WORDS[reply.status] || "");
    window.location.replace(base + "/");
  }
  function refused(entry, reply) {
    if (entry.kind === "pick") {
      store(PENDING, null);
    }
    busy = false;
    var button = document.getElementById("submit");
    if (button) {
      button.removeAttribute("aria-busy");
      button.classList.remove("pending");
    }
    say("");
    var place = placeFor(reply.field || "");
    if (!place) {
      // sent from another page (before a restart, from another tab): this page is the current
      store(ANNOUNCE, "Not saved: " + reply.message);
      window.location.replace(base + "/");
      return;
    }
    showMissing(place, reply.message);
  }
  function send(entry) {
    if (timer !== null) {
      window.clearTimeout(timer);
      timer = null;
    }
    var body = new URLSearchParams();
    entry.fields.forEach(function (pair) {
      body.append(pair[0], pair[1]);
    });
    window
      .fetch(entry.url, {
        method: "POST",
        body: body,
        headers: { Accept: "application/json" },
        credentials: "same-origin",
        cache: "no-store"
      })
      .then(function (response) {
        if (response.status === 422) {
          return response.json().then(function (reply) {
            refused(entry, reply);
          });
        }
        if (!response.ok) {
          throw new Error("status " + response.status);
        }
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") < 0) {
          arrived(entry, { status: "" }); // answered, but not in words this page knows
          return null;
        }
        return response.json().then(function (reply) {
          arrived(entry, reply);
        });
      })
      .catch(function () {
        waiting(entry);
        timer = window.setTimeout(function () {
          send(entry);
        }, delay);
        delay = Math.min(delay * 2, 8000);
      });
  }
  function sendNow(entry) {
    delay = 1000;
    send(entry);
  }
  window.addEventListener("online", function () {
    var kept = stored(PENDING);
    if (kept && timer !== null) {
      sendNow(JSON.parse(kept));
    }
  });

  // The second click of a double click is never a new answer: the first one's answer may be
  // saved, and the next trial shown under the pointer, before it lands (a local bt-judge answers
  // within a double click's interval), and its button would then answer a trial never read.
  // The browser counts the clicks (event.detail 2 and up); a key press has detail 0.
  document.addEventListener(
    "click",
    function (event) {
      var target = event.target && event.target.closest;
      target = target ? event.target.closest("button, input") : null;
      if (event.detail > 1 && target && target.type === "submit") {
        event.preventDefault();
      }
    },
    true
  );
  document.addEventListener("submit", function (event) {
    var form = event.target;
    event.preventDefault();
    if (busy) {
      return;
    }
    var submitter = event.submitter || null;
    if (form === answer && !complete()) {
      return;
    }
    var list = fields(form, submitter);
    var kind = form === answer ? "pick" : form.id;
    var entry = { url: form.action, fields: list, kind: kind, trial: trialOf(list) };
    busy = true;
    if (kind === "pick") {
      store(PENDING, JSON.stringify(entry));
    }
    sendNow(entry);
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      busy = false;
    }
  });

  // ------------------------------------------------------------------ what is missing
  function clearMissing() {
    var old = document.querySelectorAll(".error");
    for (var i = 0; i < old.length; i++) {
      old[i].parentNode.removeChild(old[i]);
    }
    var marked = document.querySelectorAll("[aria-invalid]");
    for (var j = 0; j < marked.length; j++) {
      marked[j].removeAttribute("aria-invalid");
    }
  }
  function showMissing(place, message) {
    clearMissing();
    var note = document.createElement("p");
    note.className = "error";
    note.id = "error";
    note.setAttribute("role", "alert");
    note.textContent = message;
    if (place.tagName.toLowerCase() === "input") {
      place.setAttribute("aria-invalid", "true");
      place.setAttribute("aria-describedby", "error");
      place.parentNode.parentNode.insertBefore(note, place.parentNode.nextSibling);
      place.focus();
      return;
    }
    place.setAttribute("aria-invalid", "true");
    place.appendChild(note);
    var first = place.querySelector("input:not(:checked)") || place.querySelector("input");
    if (first) {
      first.focus();
    }
  }
  function placeFor(field) {
    if (!answer) {
      return null;
    }
    if (field === "pick") {
      return document.getElementById("choices");
    }
    if (field === "reason") {
      return document.getElementById("reason");
    }
    if (field === "nicknames") {
      return answer.querySelector(".nicknames");
    }
    var asked = answer.querySelectorAll("fieldset[data-question]");
    for (var i = 0; i < asked.length; i++) {
      if (asked[i].getAttribute("data-question") === field) {
        return asked[i];
      }
    }
    return field ? null : answer;
  }
  function answeredAll(group) {
    var names = {};
    var radios = group.querySelectorAll('input[type="radio"]');
    for (var i = 0; i < radios.length; i++) {
      names[radios[i].name] = names[radios[i].name] || radios[i].checked;
    }
    for (var name in names) {
      if (Object.prototype.hasOwnProperty.call(names, name) && !names[name]) {
        return false;
      }
    }
    return true;
  }
  // Each part of a preference answer, in the order the server checks them.
  function complete() {
    if (pickKind !== "side") {
      return true;
    }
    var choices = document.getElementById("choices");
    if (choices && !answeredAll(choices)) {
      showMissing(choices, choices.getAttribute("data-missing"));
      return false;
    }
    var reason = document.getElementById("reason");
    if (reason && reason.hasAttribute("required") && !reason.value.trim()) {
      showMissing(reason, reason.getAttribute("data-missing"));
      return false;
    }
    var asked = answer.querySelectorAll("fieldset[data-missing][data-question]");
    for (var i = 0; i < asked.length; i++) {
      if (!answeredAll(asked[i])) {
        showMissing(asked[i], asked[i].getAttribute("data-missing"));
        return false;
      }
    }
    return true;
  }

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
    answer.addEventListener("change", function (event) {
      if (pickKind === "side") {
        mark(chosenOption());
      }
      var group = event.target.closest ? event.target.closest("[aria-invalid]") : null;
      if (group && answeredAll(group)) {
        clearMissing();
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

  // ------------------------------------------------------------------ help
  var help = document.getElementById("help");
  var helpButton = document.getElementById("help-button");
  function syncHelp() {
    if (help && helpButton) {
      helpButton.setAttribute("aria-expanded", help.open ? "true" : "false");
    }
  }
  if (help) {
    help.addEventListener("toggle", syncHelp);
  }
  if (helpButton) {
    helpButton.addEventListener("click", function () {
      if (!help) {
        return;
      }
      help.open = !help.open;
      syncHelp();
      if (help.open) {
        help.scrollIntoView({ block: "nearest" });
      }
    });
  }

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
    if (event.key === "Escape") {
      var away = document.getElementById("cancel-button") || document.getElementById("back");
      if (away) {
        event.preventDefault();
        away.click();
      }
      return;
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
    var quoted = key === '"' || key === "\\" ? "\\" + key : key;
    var button = document.querySelector(
      'button[data-key="' + quoted + '"], a[data-key="' + quoted + '"]'
    );
    if (button) {
      event.preventDefault();
      button.click();
      return;
    }
    var radio = document.querySelector(
      'input[type="radio"][data-key="' + quoted + '"], ' +
        'input[type="radio"][data-key2="' + quoted + '"]'
    );
    if (radio) {
      event.preventDefault();
      radio.checked = true;
      radio.focus(); // Tab goes on to the reason box
      mark(chosenOption());
      var group = radio.closest("[aria-invalid]");
      if (group) {
        clearMissing();
      }
      return;
    }
    if (key === "y" || key === "n") {
      var ask = currentQuestion();
      if (ask) {
        event.preventDefault();
        ask.querySelector('input[value="' + (key === "y" ? "yes" : "no") + '"]').checked = true;
        var missing = ask.closest("[aria-invalid]");
        if (missing && answeredAll(missing)) {
          clearMissing();
        }
        markQuestion();
      }
    }
  });
  if (pickKind === "side") {
    mark(chosenOption());
  }

  // ------------------------------------------------------------------ on arrival
  var kept = stored(PENDING);
  if (kept) {
    busy = true;
    var entry = JSON.parse(kept);
    waiting(entry);
    sendNow(entry);
  } else {
    var news = stored(ANNOUNCE);
    if (news) {
      store(ANNOUNCE, null);
      // Said after the page has settled, so a screen reader hears the change.
      window.setTimeout(function () {
        say(news);
      }, 150);
    }
  }
  // Said once the keys above are listening: keys.js is deferred, so on a slow machine the
  // page can show its text before a key press would do anything (the browser tests wait
  // for this rather than for the text).
  document.documentElement.setAttribute("data-keys", "ready");
})();
