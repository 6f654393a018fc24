// Small behaviours on top of HTMX: Enter sends, the transcript follows new messages, every
// form knows the last message the page already shows, and a reply shows as it is written.
(function () {
  function lastMessageId() {
    // A message still waiting for its turn is asked for again, so that it comes back answered.
    var items = document.querySelectorAll("#transcript > li[data-id]:not(.msg-pending)");
    return items.length ? items[items.length - 1].getAttribute("data-id") : "0";
  }
  window.conciergeLastMessage = lastMessageId;
  window.conciergeVersion = function () {
    var el = document.getElementById("conversation-version");
    return el ? el.getAttribute("data-version") : "";
  };
  function dedupe() {
    // The newest copy of a message wins: a queued message comes back once its turn has run.
    var newest = {};
    document.querySelectorAll("#transcript > li[data-id]").forEach(function (li) {
      var id = li.getAttribute("data-id");
      if (newest[id]) { newest[id].remove(); }
      newest[id] = li;
    });
  }

  // The reply as the model writes it: asked for while a turn is on its way and shown in a bubble
  // of its own, which the stored message replaces (what the model wrote counts only once checked).
  var draftTimer = null, draftAsking = false, draftShown = false, composerBusy = false, replyDueBy = 0;
  var slowTimer = null, unsentText = null;
  function expectReply() {
    var transcript = document.getElementById("transcript");
    var seconds = Number(transcript && transcript.getAttribute("data-reply-wait")) || 30;
    replyDueBy = Date.now() + seconds * 1000;
  }
  function waitingForReply() {
    // Sending, queued, or the person spoke last while a reply is still due (a worker's model writing it).
    if (composerBusy || document.querySelector("#transcript > li.msg-pending[data-id]") !== null) { return true; }
    var shown = document.querySelectorAll("#transcript > li[data-id]");
    var last = shown.length ? shown[shown.length - 1] : null;
    return last !== null && last.classList.contains("msg-user") && !last.classList.contains("msg-failed") && Date.now() < replyDueBy;
  }
  function draftBubble() {
    var li = document.getElementById("draft-reply");
    if (!li) {
      li = document.createElement("li");
      li.id = "draft-reply";
      li.className = "msg msg-draft";
      li.setAttribute("aria-hidden", "true");  // read out once, as the stored message, not at every word
      li.innerHTML = '<span class="who"></span><div class="bubble"></div>';
      li.querySelector(".who").textContent = document.getElementById("transcript").getAttribute("data-concierge");
      document.getElementById("transcript").appendChild(li);
    }
    return li;
  }
  function dropDraft() {
    var li = document.getElementById("draft-reply");
    if (li) { li.remove(); }
  }
  function askForDraft() {
    var transcript = document.getElementById("transcript");
    var url = transcript && transcript.getAttribute("data-draft-url");
    if (!url || !waitingForReply()) { stopDraft(); return; }
    if (draftAsking) { return; }
    draftAsking = true;
    fetch(url, {credentials: "same-origin", cache: "no-store", headers: {"Accept": "application/json"}})
      .then(function (response) { return response.status === 200 ? response.json() : null; })
      .then(function (draft) {
        if (draft && waitingForReply()) {
          var li = draftBubble();
          li.querySelector(".bubble").textContent = draft.text;  // "" before the first words: the caret alone
          document.getElementById("transcript").appendChild(li);  // after anything swapped in meanwhile
          li.scrollIntoView({block: "end"});
          draftShown = true;
        } else if (!draft && draftShown) {
          // Written and stored: fetch it now rather than at the next poll, whatever version the page holds.
          draftShown = false;
          var poller = document.getElementById("poller");
          if (poller) { htmx.trigger(poller, "draft-done"); }
        }
      })
      .catch(function () { /* the reply still comes whole with the page's next update */ })
      .then(function () { draftAsking = false; });
  }
  function watchDraft() {
    if (!draftTimer) { draftTimer = window.setInterval(askForDraft, 250); }
  }
  function stopDraft() {
    if (draftTimer) { window.clearInterval(draftTimer); draftTimer = null; }
    draftShown = false;
    dropDraft();
  }

  // A turn waiting longer than usual says so: the server counts the seconds left on each copy it
  // sends (data-delayed-in), so a copy swapped in later keeps the same moment.
  function showDelays() {
    document.querySelectorAll("#transcript > li.msg-pending .msg-delayed[hidden]").forEach(function (note) {
      if (note.getAttribute("data-timer")) { return; }
      note.setAttribute("data-timer", "1");
      var seconds = Number(note.getAttribute("data-delayed-in")) || 0;
      window.setTimeout(function () { note.hidden = false; }, seconds * 1000);
    });
  }

  function sync() {
    dedupe();
    showDelays();
    if (document.querySelector("#transcript > li.msg-pending[data-id]")) { expectReply(); }
    if (waitingForReply()) { watchDraft(); } else { stopDraft(); }
    var last = lastMessageId();
    document.querySelectorAll("input.after-field").forEach(function (input) { input.value = last; });
    keepInView();
  }
  function newestReply() {
    var replies = document.querySelectorAll("#transcript > li.msg-assistant[data-id], #transcript > li.msg-human[data-id]");
    return replies.length ? replies[replies.length - 1] : null;
  }
  function keepInView() {
    // The newest reply from its first line, then as much of the options and the message box as fits
    // under it: a long reply keeps its start in view rather than scrolling it off the top.
    var reply = newestReply(), box = document.getElementById("composer") || document.getElementById("options");
    var last = document.getElementById("transcript") && document.getElementById("transcript").lastElementChild;
    if (box) { box.scrollIntoView({block: "end"}); }
    var top = (reply || last) ? (reply || last).getBoundingClientRect().top : 0;
    if (top < 0) { window.scrollBy(0, top - 8); }
  }
  document.addEventListener("DOMContentLoaded", function () {
    // Loaded while the model writes a reply (a reload, a second tab): show it as it is written.
    var transcript = document.getElementById("transcript");
    if (transcript && transcript.hasAttribute("data-writing")) { expectReply(); }
    sync();
    var text = document.getElementById("message-text");
    if (text) {
      text.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          if (text.value.trim() && !composerBusy) { text.form.requestSubmit(); }
        }
      });
    }
  });
  document.addEventListener("htmx:configRequest", function (event) {
    // A message's key, set before htmx sends the form: the same key only for the same words sent again.
    if (event.detail.elt && event.detail.elt.id === "composer") {
      var key = event.detail.elt.querySelector("#sent-key"), words = event.detail.elt.querySelector("textarea").value.trim();
      if (key && (words !== unsentText || !key.value)) { key.value = newKey(); }
      if (key) { event.detail.parameters.sent_key = key.value; }
    }
    // The poll says what the page already shows (no hx-vals "js:": the CSP forbids eval).
    if (event.detail.elt && event.detail.elt.id === "poller") {
      event.detail.parameters.after = lastMessageId();
      var done = event.detail.triggeringEvent && event.detail.triggeringEvent.type === "draft-done";
      event.detail.parameters.v = done ? "" : window.conciergeVersion();
      // A turn is waiting: the server looks whether its task was lost (queued again, or failed).
      if (document.querySelector("#transcript > li.msg-pending[data-id]")) { event.detail.parameters.waiting = "1"; }
    }
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    // Show the person's message at once, before the reply is ready.
    var form = event.detail.elt;
    if (form && form.id === "composer") {
      var text = form.querySelector("textarea").value.trim();
      if (!text) { event.preventDefault(); return; }
      if (composerBusy) { event.preventDefault(); return; }  // a second Enter or click queues no ghost
      document.querySelectorAll("#transcript > li.msg-unsent").forEach(function (old) { old.remove(); });
      var li = document.createElement("li");
      li.className = "msg msg-user msg-sending";
      li.setAttribute("aria-hidden", "true");  // read out once, as the stored message that replaces it
      li.innerHTML = '<span class="who"></span><div class="bubble"></div>';
      li.querySelector(".who").textContent = document.body.getAttribute("data-you") || "You";
      li.querySelector(".bubble").textContent = text;
      document.getElementById("transcript").appendChild(li);
      composerBusy = true;
      slowTimer = window.setTimeout(function () { showSlow(form); }, 5000);
      expectReply();
      sync();
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form && form.id === "composer") {
      composerBusy = false;
      window.clearTimeout(slowTimer);
      hideSlow();
      if (!event.detail.successful) { markUnsent(form); } else { unsentText = null; }
      sync();
    }
  });
  function markUnsent(form) {
    // The server down, a 500, a lost connection: the bubble says it was not sent, the text stays in
    // the box, and "Send again" sends it with the same key (the server answers a copy it already has once).
    var li = document.querySelector("#transcript > li.msg-sending");
    if (!li) { return; }
    li.classList.remove("msg-sending");
    li.classList.add("msg-unsent");
    li.removeAttribute("aria-hidden");
    unsentText = form.querySelector("textarea").value.trim();
    var note = document.createElement("p");
    note.className = "msg-note msg-failed-note";
    note.setAttribute("role", "alert");
    note.textContent = form.getAttribute("data-unsent");
    var again = document.createElement("button");
    again.type = "button";
    again.className = "secondary";
    again.textContent = form.getAttribute("data-retry");
    again.addEventListener("click", function () {
      var box = form.querySelector("textarea");
      if (!box.value.trim()) { box.value = unsentText || ""; }
      form.requestSubmit();
    });
    li.appendChild(note);
    li.appendChild(again);
    form.querySelector("textarea").focus();
  }
  function showSlow(form) {
    var text = document.querySelector("#working .working-text");
    if (text && composerBusy) { text.textContent = form.getAttribute("data-slow"); }
  }
  function hideSlow() {
    var text = document.querySelector("#working .working-text");
    if (text) { text.textContent = text.getAttribute("data-usual"); }
  }
  function newKey() {
    if (window.crypto && window.crypto.randomUUID) { return window.crypto.randomUUID(); }
    return String(Date.now()) + "-" + String(Math.random()).slice(2);
  }
  document.addEventListener("htmx:afterSwap", function (event) {
    document.querySelectorAll("#transcript .msg-sending").forEach(function (li) { li.remove(); });
    var form = document.getElementById("composer");
    var from = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (form && from === form) {
      form.querySelector("textarea").value = "";
      form.querySelector("textarea").focus();
    } else if (from && from.closest && from.closest(".option, .retry")) {
      // A chosen option's buttons are gone: focus goes to the reply it brought, not to the page body.
      var reply = newestReply();
      if (reply) { reply.setAttribute("tabindex", "-1"); reply.focus({preventScroll: true}); }
    }
    sync();
  });

  // A blocked option stays reachable (aria-disabled, its reasons read with it) but does nothing.
  document.addEventListener("submit", function (event) {
    var button = event.submitter || (event.target.querySelector && event.target.querySelector("button[aria-disabled='true']"));
    if (button && button.getAttribute("aria-disabled") === "true") { event.preventDefault(); event.stopPropagation(); }
  }, true);

  // The browser's own "please fill in this field" speaks the browser's language: the page's replaces it.
  document.addEventListener("invalid", function (event) {
    var field = event.target;
    if (field.getAttribute && field.getAttribute("data-invalid")) { field.setCustomValidity(field.getAttribute("data-invalid")); }
  }, true);
  ["input", "change"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      if (event.target.setCustomValidity && event.target.getAttribute("data-invalid")) { event.target.setCustomValidity(""); }
    }, true);
  });
  document.addEventListener("htmx:oobAfterSwap", sync);
})();
