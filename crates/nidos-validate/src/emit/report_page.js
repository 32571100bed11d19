// The script of the HTML report (`render_html.rs` inlines it): filters by severity, code,
// subject and datatype; counts that follow them; the URL fragment as the filters' state
// (read at load and on `hashchange`, rewritten with `history.replaceState` on a change).
// It only reads the page and sets attributes and text: no HTML is built from data.
(function () {
  'use strict';
  var keys = ['severity', 'code', 'subject', 'datatype'];
  var sel = {};
  keys.forEach(function (k) { sel[k] = document.getElementById('filter-' + k); });

  function setHidden(el, hide) {
    if (hide) { el.setAttribute('hidden', ''); } else { el.removeAttribute('hidden'); }
  }
  function current() {
    var f = {};
    keys.forEach(function (k) { f[k] = sel[k].value; });
    return f;
  }
  function rowMatches(subject, datatype, f) {
    return (!f.subject || subject === f.subject) && (!f.datatype || datatype === f.datatype);
  }
  // The locations of a group past the listed ones, as [subject, datatype, count] triples.
  function unlisted(unit, f) {
    var raw = unit.getAttribute('data-rest');
    if (!raw) { return 0; }
    var n = 0;
    try {
      JSON.parse(raw).forEach(function (e) {
        if (rowMatches(e[0], e[1], f)) { n += e[2]; }
      });
    } catch (e) { return 0; }
    return n;
  }
  // "(9 locations)", filtered "(3 of 9 locations)"; a section's count has no unit.
  function showCount(span, shown, filtered) {
    if (!span) { return; }
    var total = parseInt(span.getAttribute('data-total'), 10) || 0;
    var unit = span.getAttribute('data-unit');
    var n = filtered && shown !== total ? shown + ' of ' + total : String(total);
    var word = unit ? ' ' + (total === 1 ? unit : unit + 's') : '';
    span.setAttribute('data-shown', String(shown));
    span.textContent = '(' + n + word + ')';
  }
  function ownCount(el) {
    var head = el.querySelector(':scope > summary .count, :scope > h2 .count');
    return head;
  }

  function apply() {
    var f = current();
    var filtered = keys.some(function (k) { return !!f[k]; });
    var all = 0;
    document.querySelectorAll('section.severity').forEach(function (s) {
      var sevOk = !f.severity || s.getAttribute('data-severity') === f.severity;
      var inSection = 0;
      s.querySelectorAll('details.group').forEach(function (g) {
        var ok = sevOk && (!f.code || g.getAttribute('data-code') === f.code);
        var subs = g.querySelectorAll('details.sub');
        var units = subs.length ? Array.prototype.slice.call(subs) : [g];
        var inGroup = 0;
        units.forEach(function (u) {
          var n = 0;
          u.querySelectorAll('li.loc').forEach(function (li) {
            var show = ok && rowMatches(li.getAttribute('data-subject') || '',
              li.getAttribute('data-datatype') || '', f);
            setHidden(li, !show);
            if (show) { n += 1; }
          });
          var rest = ok ? unlisted(u, f) : 0;
          var more = u.querySelector('li.more');
          if (more) {
            more.textContent = '\u2026 and ' + rest + ' more';
            setHidden(more, rest === 0);
          }
          n += rest;
          if (u !== g) {
            setHidden(u, n === 0);
            showCount(ownCount(u), n, filtered);
          }
          inGroup += n;
        });
        setHidden(g, inGroup === 0);
        showCount(ownCount(g), inGroup, filtered);
        inSection += inGroup;
      });
      setHidden(s, inSection === 0);
      showCount(ownCount(s), inSection, filtered);
      all += inSection;
    });
    var status = document.getElementById('shown');
    if (status) {
      var total = status.getAttribute('data-total');
      status.setAttribute('data-shown', String(all));
      status.textContent = filtered
        ? 'Showing ' + all + ' of ' + total + ' issues.'
        : 'Showing all ' + total + ' issues.';
    }
  }

  // The fragment: `key=value` pairs joined by `&`, each part percent-encoded. A part
  // that does not decode (a malformed `%` escape) or names no option is skipped alone.
  function decode(s) {
    try { return decodeURIComponent(s); } catch (e) { return null; }
  }
  function fromHash() {
    var h = location.hash.replace(/^#/, '');
    var ignored = [];
    keys.forEach(function (k) { sel[k].value = ''; });
    h.split('&').forEach(function (p) {
      if (!p) { return; }
      var at = p.indexOf('=');
      var k = decode(at < 0 ? p : p.slice(0, at));
      var v = at < 0 ? null : decode(p.slice(at + 1));
      if (k === null || v === null || keys.indexOf(k) < 0) { ignored.push(p); return; }
      sel[k].value = v;
      if (sel[k].value !== v) { sel[k].value = ''; ignored.push(p); }
    });
    var note = document.getElementById('fragment-note');
    if (note) {
      note.textContent = ignored.length
        ? 'Ignored in the address: ' + ignored.join(', ') + ' (not a filter, a value without issues, or a malformed % escape).'
        : '';
      setHidden(note, ignored.length === 0);
    }
  }
  function toHash() {
    var f = current();
    var parts = [];
    keys.forEach(function (k) {
      if (f[k]) { parts.push(k + '=' + encodeURIComponent(f[k])); }
    });
    return parts.length ? '#' + parts.join('&') : '';
  }
  function sync() {
    var want = toHash();
    if (location.hash === want || (want === '' && location.hash === '#')) { return; }
    try {
      history.replaceState(null, '', want || location.pathname + location.search);
    } catch (e) { /* a page without history (some viewers): the filters still apply */ }
  }
  function changed() { apply(); sync(); }

  keys.forEach(function (k) { sel[k].addEventListener('change', changed); });
  document.querySelectorAll('[data-set]').forEach(function (b) {
    b.addEventListener('click', function () {
      var k = b.getAttribute('data-set');
      if (sel[k]) { sel[k].value = b.getAttribute('data-value') || ''; changed(); }
    });
  });
  var clear = document.getElementById('clear-filters');
  if (clear) {
    clear.addEventListener('click', function () {
      keys.forEach(function (k) { sel[k].value = ''; });
      changed();
    });
  }
  function openAll(open) {
    document.querySelectorAll('details.group:not([hidden]), details.sub:not([hidden])')
      .forEach(function (d) { d.open = open; });
  }
  var ex = document.getElementById('expand-all');
  if (ex) { ex.addEventListener('click', function () { openAll(true); }); }
  var co = document.getElementById('collapse-all');
  if (co) { co.addEventListener('click', function () { openAll(false); }); }
  window.addEventListener('hashchange', function () { fromHash(); apply(); });

  fromHash();
  apply();
  document.body.setAttribute('data-script', 'done');
})();
