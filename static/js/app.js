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
    var transcript = document.getElementById("transcript");
    if (transcript) { transcript.lastElementChild && transcript.lastElementChild.scrollIntoView({block: "end"}); }
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
          if (text.value.trim()) { text.form.requestSubmit(); }
        }
      });
    }
  });
  document.addEventListener("htmx:configRequest", function (event) {
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
      var li = document.createElement("li");
      li.className = "msg msg-user msg-sending";
      li.innerHTML = '<span class="who"></span><div class="bubble"></div>';
      li.querySelector(".who").textContent = document.body.getAttribute("data-you") || "You";
      li.querySelector(".bubble").textContent = text;
      document.getElementById("transcript").appendChild(li);
      composerBusy = true;
      expectReply();
      sync();
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt && event.detail.elt.id === "composer") {
      composerBusy = false;
      sync();
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    document.querySelectorAll("#transcript .msg-sending").forEach(function (li) { li.remove(); });
    var form = document.getElementById("composer");
    if (form && event.detail.requestConfig && event.detail.requestConfig.elt === form) {
      form.querySelector("textarea").value = "";
      form.querySelector("textarea").focus();
    }
    sync();
  });
  document.addEventListener("htmx:oobAfterSwap", sync);
})();
