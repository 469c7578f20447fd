// cronledger dashboard: progressive enhancement only; every page works without this file.
// - <time datetime> elements show the viewer's local time (UTC stays in the title, on hover);
// - [data-live] regions are replaced by the "fragment" events of their Server-Sent Events URL
//   (api/ui/live.py);
// - [data-preview] forms fetch the schedule preview fragment as the schedule and zone change;
// - forms with data-confirm ask before they are sent;
// - [data-channel-kind] channel forms show only the fields of the chosen kind;
// - select[data-autosubmit] (the team switcher) sends its form when changed;
// - buttons with data-copy="ID" copy the text of element ID (ping URLs, snippets, new keys).
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
    second: "2-digit", timeZoneName: "short"
  });

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d) || el.getAttribute("data-style") === "date") { return; }  // UTC days stay
      if (el.getAttribute("data-style") === "ago") {  // "3 min ago" stays; local time on hover
        el.title = fmt.format(d) + " (" + el.title + ")";
      } else { el.textContent = fmt.format(d); }
    });
  }

  function live(el) {
    if (!window.EventSource) { return; }
    var source = new EventSource(el.getAttribute("data-live"));
    source.addEventListener("fragment", function (event) {
      el.innerHTML = event.data;  // server-rendered, autoescaped HTML
      localTimes(el);
      el.dispatchEvent(new CustomEvent("live:updated", { bubbles: true }));
    });
  }

  function preview(form) {
    var target = document.getElementById(form.getAttribute("data-preview"));
    var schedule = form.elements.namedItem("schedule");
    var zone = form.elements.namedItem("timezone");
    var spread = form.elements.namedItem("spread");
    if (!target || !schedule || !zone) { return; }
    var timer = null, seq = 0;
    function refresh() {
      var mine = ++seq;
      var url = target.getAttribute("data-url") + "?schedule=" + encodeURIComponent(schedule.value) +
        "&timezone=" + encodeURIComponent(zone.value) +
        (spread ? "&spread=" + encodeURIComponent(spread.value) : "") +
        (target.getAttribute("data-job") ? "&job_id=" + target.getAttribute("data-job") : "");
      fetch(url, { credentials: "same-origin" }).then(function (r) { return r.text(); })
        .then(function (html) {
          if (mine !== seq) { return; }  // an older answer arriving late
          target.innerHTML = html;
          localTimes(target);
        });
    }
    function later() { clearTimeout(timer); timer = setTimeout(refresh, 200); }
    schedule.addEventListener("input", later);
    zone.addEventListener("input", later);
    if (spread) { spread.addEventListener("input", later); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    document.querySelectorAll("[data-live]").forEach(live);
    document.querySelectorAll("form[data-preview]").forEach(preview);
    document.addEventListener("click", function (event) {
      var button = event.target.closest && event.target.closest("button[data-copy]");
      var source = button && document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(source.textContent).then(function () {
        var label = button.textContent;
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
    document.querySelectorAll("[data-channel-kind]").forEach(function (grid) {
      var select = grid.querySelector("select[name=kind]");
      var fixed = grid.querySelector("input[type=hidden][name=kind]");
      function show() {  // only the chosen kind's fields (the server ignores the others)
        var kind = select ? select.value : (fixed ? fixed.value : "");
        grid.querySelectorAll("[data-kinds]").forEach(function (field) {
          field.hidden = field.getAttribute("data-kinds").split(" ").indexOf(kind) < 0;
        });
      }
      if (select) { select.addEventListener("change", show); }
      show();
    });
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () {  // the team switcher: no extra click
        if (select.value) { select.form.submit(); }
      });
    });
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
      });
    });
  });
})();
