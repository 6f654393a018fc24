// Small behaviours on top of HTMX: Enter sends, the transcript follows new messages,
// and every form knows the last message the page already shows.
(function () {
  function lastMessageId() {
    var items = document.querySelectorAll("#transcript > li[data-id]");
    return items.length ? items[items.length - 1].getAttribute("data-id") : "0";
  }
  window.conciergeLastMessage = lastMessageId;
  window.conciergeVersion = function () {
    var el = document.getElementById("conversation-version");
    return el ? el.getAttribute("data-version") : "";
  };
  function dedupe() {
    var seen = {};
    document.querySelectorAll("#transcript > li[data-id]").forEach(function (li) {
      var id = li.getAttribute("data-id");
      if (seen[id]) { li.remove(); } else { seen[id] = true; }
    });
  }
  function sync() {
    dedupe();
    var last = lastMessageId();
    document.querySelectorAll("input.after-field").forEach(function (input) { input.value = last; });
    var transcript = document.getElementById("transcript");
    if (transcript) { transcript.lastElementChild && transcript.lastElementChild.scrollIntoView({block: "end"}); }
  }
  document.addEventListener("DOMContentLoaded", function () {
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
      event.detail.parameters.v = window.conciergeVersion();
    }
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    // Show the person's message at once, before the reply is ready.
    var form = event.detail.elt;
    if (form && form.id === "composer") {
      var text = form.querySelector("textarea").value.trim();
      if (!text) { event.preventDefault(); return; }
      var li = document.createElement("li");
      li.className = "msg msg-user msg-pending";
      li.innerHTML = '<span class="who"></span><div class="bubble"></div>';
      li.querySelector(".who").textContent = document.body.getAttribute("data-you") || "You";
      li.querySelector(".bubble").textContent = text;
      document.getElementById("transcript").appendChild(li);
      sync();
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    document.querySelectorAll("#transcript .msg-pending").forEach(function (li) { li.remove(); });
    var form = document.getElementById("composer");
    if (form && event.detail.requestConfig && event.detail.requestConfig.elt === form) {
      form.querySelector("textarea").value = "";
      form.querySelector("textarea").focus();
    }
    sync();
  });
  document.addEventListener("htmx:oobAfterSwap", sync);
})();
