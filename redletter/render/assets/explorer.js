// The proof explorer's script: steps through the run embedded in #rl-data.
// Everything it shows was computed by the kit (redletter/render/proof.py); this
// script only selects what belongs to the current step and draws it.  It builds
// the page with textContent (never innerHTML with data), needs no network, and
// works from file://.
(function () {
  "use strict";
  // A page shows one run, or several of the same model side by side (a failing
  // node's own run and the model's): ALL.runs holds each run's part of the data, and
  // D is the run the panels follow (the shared parts and that run's).
  var ALL = JSON.parse(document.getElementById("rl-data").textContent);
  var RUNS = ALL.runs;
  var runIdx = 0;
  function runData(i) {
    var d = {};
    Object.keys(ALL).forEach(function (k) { if (k !== "runs") { d[k] = ALL[k]; } });
    Object.keys(RUNS[i]).forEach(function (k) { d[k] = RUNS[i][k]; });
    return d;
  }
  var D = runData(0);
  var N = D.states.length - 1;
  var cur = 0;
  var snapIdx = 0;
  var timer = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function byId(id) { return document.getElementById(id); }
  function append(parent, children) {
    children.forEach(function (c) { parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return parent;
  }
  function table(headers, rows) {
    var t = el("table");
    var tr = el("tr");
    headers.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    t.appendChild(tr);
    rows.forEach(function (cells) {
      var r = el("tr");
      cells.forEach(function (c) {
        var td = el("td");
        if (c instanceof Node) { td.appendChild(c); } else { td.textContent = String(c); }
        r.appendChild(td);
      });
      t.appendChild(r);
    });
    return t;
  }
  function colour(red) { return el("span", "rl-colour " + (red ? "red" : "white"), red ? "● red" : "○ white"); }
  function chips(list, letterOf) {
    var span = el("span");
    if (!list.length) { span.appendChild(el("span", "rl-empty", "empty")); return span; }
    list.forEach(function (m, i) {
      if (i > 0) { span.appendChild(document.createTextNode(" ")); }
      var isLetter = letterOf(m);
      var c = el("span", "rl-chip" + (isLetter ? " letter" : ""), typeof m === "string" ? m : m.l);
      c.title = isLetter ? "a red letter (marker)" : "an application message";
      span.appendChild(c);
    });
    return span;
  }
  function ruleId(group, code) { return "rl-rule-" + group + "-" + String(code).replace(/ /g, "-"); }
  function ruleWords(lemma, code) {
    var hit = D.rules[String(lemma)].filter(function (r) { return r[0] === code; })[0];
    return hit ? hit[1] : "";
  }
  // a rule code, linked to its words in the legend (and its words as a tooltip)
  function ruleRef(lemma, code) {
    var a = el("a", "rl-ruleref", code);
    a.href = "#" + ruleId(lemma, code);
    a.title = ruleWords(lemma, code);
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      var t = byId(ruleId(lemma, code));
      if (t) {
        t.scrollIntoView({ block: "center" });
        t.classList.add("rl-flash");
        setTimeout(function () { t.classList.remove("rl-flash"); }, 1500);
      }
    });
    return a;
  }
  // a note in lines of at most `chars` characters, broken after "; " or ", " where it
  // can (else at a space, else anywhere), later lines indented: wrap_note in diagram.py
  function wrapNote(text, chars) {
    if (text.length <= chars) { return [text]; }
    var pieces = text.split(/(?<=; )|(?<=, )/);
    var lines = [];
    var cur = "";
    pieces.forEach(function (piece) {
      while (piece) {
        if (cur.length + piece.length <= chars) {
          cur += piece; piece = "";
        } else if (cur.trim()) {
          lines.push(cur.replace(/\s+$/, "")); cur = "  ";
        } else {
          var room = chars - cur.length;
          var cut = piece.lastIndexOf(" ", room - 1);
          cut = cut > 0 ? cut + 1 : room;
          lines.push((cur + piece.slice(0, cut)).replace(/\s+$/, ""));
          piece = piece.slice(cut); cur = "  ";
        }
      }
    });
    if (cur.trim()) { lines.push(cur.replace(/\s+$/, "")); }
    return lines;
  }
  function mark(ok, yes, no) { return el("span", ok ? "rl-ok" : "rl-no", ok ? "✓ " + yes : "✗ " + no); }

  // ---------------------------------------------------------------- header
  byId("rl-subtitle").textContent = D.subtitle;
  if (D.command) {
    append(byId("rl-command"), ["Made with: ", el("code", null, D.command)]);
  }
  var banner = byId("rl-banner");
  var brokenWalks = [];
  function jump(n, text) {
    var a = el("a", null, text);
    a.href = "#step=" + n;
    a.addEventListener("click", function (ev) { ev.preventDefault(); go(n); });
    return a;
  }
  function showBanner() {
    clear(banner);
    banner.className = "rl-banner";
    brokenWalks = D.walks.filter(function (w) { return w.available && !w.ok; });
    // Every problem of the run, as one paragraph each, earliest first; the first is the
    // headline (the node's divergence when there is one), the others are folded away.
    var problems = [];
    D.annotations.forEach(function (a) {
      var p = el("p");
      append(p, [el("strong", null, a.title + " "), jump(a.step, "at step " + a.step), ": " + a.text]);
      problems.push({ step: a.step, rank: 0, node: p });
    });
    D.breaks.forEach(function (b) {
      var p = el("p");
      var what = (b.name === "ShadowLemma0" ? "Action property " : "Invariant ") + b.name + " is violated";
      append(p, [el("strong", null, what), " ", jump(b.step, "at step " + b.step),
        (b.conjunct ? " (conjunct " + b.conjunct + ")" : "") + (b.why ? ": " + b.why : "") +
        (b.checked ? "" : " — not checked by the model's cfg")]);
      problems.push({ step: b.step, rank: b.checked ? 1 : 3, node: p });
    });
    brokenWalks.forEach(function (w) {
      var p = el("p");
      var last = w.moves[w.moves.length - 1];
      append(p, [el("strong", null, "Lemma " + w.lemma + "'s shadow network breaks (snapshot " + w.snap + ")"), " ",
        jump(w.verdictStep, "at step " + w.verdictStep),
        ": rule (", ruleRef(w.lemma, last ? last.rule : "?"), ")" + (last && last.ruleText ? ", “" + last.ruleText + "”" : "") +
        " — " + (last && last.why ? last.why : w.verdictWhy)]);
      problems.push({ step: w.verdictStep, rank: 2, node: p });
    });
    if (problems.length) {
      // the headline: the node's divergence, else the first break of a property the
      // model's cfg checks (the verdict), else the first shadow network that breaks;
      // the rest (what follows from it, or explains it) folded, earliest first
      problems.sort(function (a, b) { return a.rank - b.rank || a.step - b.step; });
      var rest = problems.slice(1).sort(function (a, b) { return a.step - b.step || a.rank - b.rank; });
      problems = [problems[0]].concat(rest);
      var head = problems[0].node;
      head.className = "rl-headline";
      banner.appendChild(head);
      if (problems.length > 1) {
        var more = el("details", "rl-more");
        var n = problems.length - 1;
        more.appendChild(el("summary", null, n + " more " + (n === 1 ? "violation" : "violations") + " in this run, earliest first"));
        problems.slice(1).forEach(function (x) { more.appendChild(x.node); });
        banner.appendChild(more);
      }
    } else {
      banner.className = "rl-banner ok";
      var done = D.walks.filter(function (w) { return w.available; });
      var p = el("p", null, done.length
        ? "Every invariant holds in every state, and both shadow networks keep step with reality to the end: Lemma 0 and Lemma 1 hold for " +
          (D.snaps.length > 1 ? "every completed snapshot" : "snapshot " + D.snaps[0]) + "."
        : "Every invariant holds in every state; no snapshot completes in this run, so the shadow networks do not run.");
      banner.appendChild(p);
    }
  }

  // ---------------------------------------------------------------- the rules' legend
  var rulesBody = byId("rl-rules-body");
  var algo = el("dl", "rl-rulelist");
  algo.appendChild(el("dt", "rl-rulegroup", "The algorithm"));
  D.algorithm.forEach(function (r) {
    var dd = el("dd");
    dd.id = ruleId("a", r[0]);
    append(dd, [el("strong", null, r[1] + ": "), "“" + r[2] + "”"]);
    algo.appendChild(dd);
  });
  rulesBody.appendChild(algo);
  [0, 1].forEach(function (lemma) {
    var dl = el("dl", "rl-rulelist");
    dl.appendChild(el("dt", "rl-rulegroup", "Lemma " + lemma + "'s shadow network"));
    D.rules[String(lemma)].forEach(function (r) {
      var dd = el("dd");
      dd.id = ruleId(lemma, r[0]);
      append(dd, [el("strong", "rl-case", r[0] === "correspondence" ? "correspondence: " : "(" + r[0] + ") "), "“" + r[1] + "”"]);
      dl.appendChild(dd);
    });
    rulesBody.appendChild(dl);
  });

  // ---------------------------------------------------------------- controls
  var slider = byId("rl-slider");
  slider.max = String(N);
  // the runs a page shows side by side: a switch picks the one the panels follow
  var runSel = byId("rl-runsel");
  if (RUNS.length > 1 && runSel) {
    runSel.appendChild(el("span", null, "run:"));
    RUNS.forEach(function (r, i) {
      var lab = el("label");
      var x = el("input");
      x.type = "radio"; x.name = "rl-run"; x.value = String(i); x.checked = i === 0;
      x.addEventListener("change", function () { useRun(i); });
      append(lab, [x, " " + r.runLabel]);
      runSel.appendChild(lab);
    });
  }
  function useRun(i) {
    runIdx = i;
    D = runData(i);
    N = D.states.length - 1;
    slider.max = String(N);
    var radios = document.querySelectorAll("input[name=rl-run]");
    if (radios[i]) { radios[i].checked = true; }
    SVGS.forEach(function (x, j) {
      var fig = x.closest ? x.closest("figure.rl-run") : null;
      if (fig) { fig.classList.toggle("rl-shown", j === i); }
    });
    showBanner();
    buildList();
    go(cur);
  }
  var sel = byId("rl-snapsel");
  if (D.snaps.length > 1) {
    sel.appendChild(el("span", null, "snapshot:"));
    D.snaps.forEach(function (k, i) {
      var lab = el("label");
      var r = el("input");
      r.type = "radio"; r.name = "rl-snap"; r.value = String(i); r.checked = i === 0;
      r.addEventListener("change", function () { snapIdx = i; show(); });
      append(lab, [r, " " + k + " (" + D.snapStyles[i].shape + ")"]);
      sel.appendChild(lab);
    });
  }
  function go(n) {
    cur = Math.max(0, Math.min(N, n));
    show();
  }
  byId("rl-first").addEventListener("click", function () { go(0); });
  byId("rl-prev").addEventListener("click", function () { go(cur - 1); });
  byId("rl-next").addEventListener("click", function () { go(cur + 1); });
  byId("rl-last").addEventListener("click", function () { go(N); });
  slider.addEventListener("input", function () { go(parseInt(slider.value, 10)); });
  var playBtn = byId("rl-play");
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playBtn.textContent = "play"; playBtn.setAttribute("aria-label", "play");
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (cur >= N) { go(0); }
    playBtn.textContent = "pause"; playBtn.setAttribute("aria-label", "pause");
    timer = setInterval(function () { if (cur >= N) { stop(); } else { go(cur + 1); } }, 900);
  }
  playBtn.addEventListener("click", play);
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (t && (t.tagName === "INPUT" && t.type !== "range" || t.tagName === "TEXTAREA")) { return; }
    if (ev.key === "ArrowRight") { go(cur + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(cur - 1); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(N); ev.preventDefault(); }
    else if (ev.key === " " && !(t && t.tagName === "BUTTON")) { play(); ev.preventDefault(); }
  });
  // one diagram per run; a click anywhere in a step's column (on a line, a dot or
  // nothing) goes to that step, in that diagram's run
  var SVGS = Array.prototype.slice.call(document.querySelectorAll("#rl-svgwrap svg"));
  SVGS.forEach(function (svg, j) {
    var cols = Array.prototype.slice.call(svg.querySelectorAll(".rl-col"));
    svg.addEventListener("click", function (ev) {
      for (var i = 0; i < cols.length; i++) {
        var b = cols[i].getBoundingClientRect();
        if (ev.clientX >= b.left && ev.clientX < b.right) {
          var n = parseInt(cols[i].getAttribute("data-step"), 10);
          if (j !== runIdx) { cur = n; useRun(j); } else { go(n); }
          return;
        }
      }
    });
  });
  var list = byId("rl-steplist");
  function buildList() {
    clear(list);
    var breakSteps = {};
    D.breaks.forEach(function (b) { breakSteps[b.step] = true; });
    brokenWalks.forEach(function (w) { breakSteps[w.verdictStep] = true; });
    D.steps.forEach(function (s, n) {
      var added = D.addedFrom !== null && n >= D.addedFrom;
      var li = el("li", (breakSteps[n] ? "broken" : "") + (added ? " added" : ""), s.text);
      if (added) {
        li.setAttribute("data-added", D.addedNote);
        li.title = D.addedNote + ", not part of the schedule judged";
      }
      li.addEventListener("click", function () { go(n); });
      list.appendChild(li);
    });
  }

  function readHash() {
    var m = /(?:^#|&)step=(\d+)/.exec(window.location.hash);
    var k = /(?:^#|&)snapshot=(\d+)/.exec(window.location.hash);
    var r = /(?:^#|&)run=(\d+)/.exec(window.location.hash);
    if (r && parseInt(r[1], 10) < RUNS.length && parseInt(r[1], 10) !== runIdx) {
      runIdx = parseInt(r[1], 10);
      D = runData(runIdx);
      N = D.states.length - 1;
      slider.max = String(N);
      var rr = document.querySelectorAll("input[name=rl-run]");
      if (rr[runIdx]) { rr[runIdx].checked = true; }
    }
    if (k) {
      var i = D.snaps.indexOf(parseInt(k[1], 10));
      if (i >= 0) {
        snapIdx = i;
        var radios = document.querySelectorAll("input[name=rl-snap]");
        if (radios[i]) { radios[i].checked = true; }
      }
    }
    return m ? parseInt(m[1], 10) : 0;
  }
  window.addEventListener("hashchange", function () {
    var before = runIdx;
    var n = readHash();
    if (runIdx !== before) { cur = n; useRun(runIdx); } else if (n !== cur) { go(n); }
  });

  // ---------------------------------------------------------------- drawing one step
  function showDiagram() {
    SVGS.forEach(function (svg, j) { showOneDiagram(svg, RUNS[j]); });
  }
  // the step where a node under test diverged, marked in every diagram (the same step
  // of each run: the node's and the model's)
  SVGS.forEach(function (svg) {
    (RUNS[0].annotations || []).forEach(function (a) {
      svg.querySelectorAll('.rl-col[data-step="' + a.step + '"]').forEach(function (c) {
        c.classList.add("rl-diverged");
        var t = document.createElementNS(c.namespaceURI, "title");
        t.textContent = a.title + " (step " + a.step + ")";
        c.appendChild(t);
      });
    });
  });
  function showOneDiagram(svg, run) {
    // what each snapshot has recorded so far (never the future), beside each machine
    var at = Math.min(cur, run.states.length - 1);
    var notesNow = run.recNotes[at] || {};
    svg.querySelectorAll("text.rl-record").forEach(function (t) {
      var key = t.getAttribute("data-snapshot") + ":" + t.getAttribute("data-machine");
      var text = notesNow[key];
      if (text === undefined) { return; }
      // wrapped as the picture wraps it (wrap_note in diagram.py), never cut
      var x = t.getAttribute("x");
      clear(t);
      wrapNote(text, 64).forEach(function (line, j) {
        var span = document.createElementNS(t.namespaceURI, "tspan");
        span.setAttribute("x", x);
        span.setAttribute("dy", j === 0 ? "0" : "15");
        span.textContent = line;
        t.appendChild(span);
      });
    });
    svg.querySelectorAll("[data-step]").forEach(function (e) {
      var s = parseInt(e.getAttribute("data-step"), 10);
      var send = e.hasAttribute("data-send") ? parseInt(e.getAttribute("data-send"), 10) : s;
      var isCol = e.classList.contains("rl-col");
      if (isCol) { e.classList.toggle("current", s === cur); return; }
      var inflight = e.classList.contains("rl-inflight") || e.classList.contains("rl-inflight-label");
      e.classList.toggle("rl-future", send > cur);
      e.classList.toggle("rl-now", s === cur || send === cur);
      e.classList.toggle("rl-flying", !inflight && send <= cur && s > cur);
    });
  }

  function showNow() {
    var s = D.steps[cur];
    byId("rl-now").textContent = (cur === 0 ? "State 0: " : "Step " + cur + " of " + N + ": ") + s.text;
    byId("rl-now-raw").textContent = s.raw;
    var notes = byId("rl-notes");
    clear(notes);
    if (D.addedFrom !== null && cur >= D.addedFrom) {
      notes.appendChild(el("div", "rl-added", "This step is " + D.addedNote + " of the schedule " +
        "(steps " + D.addedFrom + "–" + N + ", the judge's drain), added so that the snapshot completes " +
        "and both shadow networks can be drawn; the node was judged on steps 1–" + (D.addedFrom - 1) + "."));
    }
    D.annotations.forEach(function (a) {
      if (a.step === cur) {
        var d = el("div", "rl-note");
        append(d, [el("strong", null, a.title + ": "), a.text]);
        if (a.names.length) { append(d, [el("br"), "Breaks: " + a.names.join(", ")]); }
        notes.appendChild(d);
      }
    });
    D.breaks.forEach(function (b) {
      if (b.step === cur) {
        var d = el("div", "rl-note");
        append(d, [el("strong", null, (b.name === "ShadowLemma0" ? "Action property " : "Invariant ") + b.name + " breaks here"),
          b.conjunct ? " — conjunct " + b.conjunct : "", ". ", b.words ? "It says: " + b.words + ". " : "", b.why]);
        notes.appendChild(d);
      }
    });
  }

  function showMachines(st) {
    var box = byId("rl-machines");
    clear(box);
    var headers = ["machine", "local state"];
    D.snaps.forEach(function (k) { headers.push("snapshot " + k); });
    var rows = D.machines.map(function (m, p) {
      var row = [el("strong", null, m), st.local[p]];
      D.snaps.forEach(function (k, i) {
        var td = el("span");
        td.appendChild(colour(st.red[i][p]));
        if (st.rec[i].m[p] !== null) { append(td, [" recorded " + st.rec[i].m[p]]); }
        row.push(td);
      });
      return row;
    });
    box.appendChild(table(headers, rows));
  }

  function showBuffers(st) {
    var box = byId("rl-buffers");
    clear(box);
    var headers = ["buffer", "contents"];
    D.snaps.forEach(function (k) { headers.push("input buffer in " + k); });
    var rows = D.chans.map(function (c, i) {
      var row = [el("strong", null, c), chips(st.buf[i], function (m) { return m.r > 0; })];
      D.snaps.forEach(function (k, j) { row.push(colour(st.redBuf[j][i])); });
      return row;
    });
    box.appendChild(table(headers, rows));
  }

  function showRecorded(st) {
    var box = byId("rl-recorded");
    clear(box);
    D.snaps.forEach(function (k, i) {
      var h = el("h3", null, "Snapshot " + k + (st.complete[i] ? " — complete" : st.started[i] ? " — in progress" : " — not started"));
      box.appendChild(h);
      if (!st.started[i]) { return; }
      var rows = [];
      D.machines.forEach(function (m, p) {
        var v = st.rec[i].m[p];
        rows.push([m, v === null ? el("span", "rl-empty", "not yet (" + m + " is white)") : v]);
      });
      D.chans.forEach(function (c, j) {
        var dst = c.split("→")[1];
        var p = D.machines.indexOf(dst);
        var status;
        if (st.redBuf[i][j]) { status = "closed (its red letter was received)"; }
        else if (st.red[i][p]) { status = "recording (" + dst + " is red, the buffer white)"; }
        else { status = "not recording yet (" + dst + " is white)"; }
        var cell = el("span");
        append(cell, [chips(st.rec[i].b[j], function () { return false; }), " " + status]);
        rows.push([c, cell]);
      });
      box.appendChild(table(["machine or buffer", "recorded"], rows));
    });
  }

  function showProps() {
    var box = byId("rl-props");
    clear(box);
    var rows = D.props.map(function (p) {
      var h = p.holds[cur];
      var cell = h === null ? el("span", "rl-na", "evaluation error") : mark(h, "holds", "VIOLATED");
      var first = D.breaks.filter(function (b) { return b.name === p.name; })[0];
      var firstCell = first ? jump(first.step, "step " + first.step) : el("span", "rl-na", "never");
      return [el("code", null, p.name), cell, p.checked ? "yes" : "no", firstCell, p.words];
    });
    box.appendChild(table(["property", "here", "in the model's cfg", "first broken", "says"], rows));
  }

  // the every-N proof's conjuncts and obligations (render/explorer.py every_n_panel)
  function showEveryN() {
    var box = byId("rl-everyn");
    var E = D.everyN;
    clear(box);
    if (!E || !E.available) {
      box.appendChild(el("p", "rl-na", "Not available for this run: " + (E ? E.why : "")));
      return;
    }
    var head = el("p");
    if (E.first === null) {
      head.textContent = "Every conjunct and every obligation holds in every state of this run.";
    } else {
      append(head, [el("strong", null, "First to break: " + E.first.name + " at "), jump(E.first.step, "step " + E.first.step)]);
    }
    box.appendChild(head);
    function firstOf(fails) {
      for (var n = 0; n < fails.length; n++) { if (fails[n].length) { return n; } }
      return -1;
    }
    function rows(items, kind) {
      return items.map(function (c) {
        var here = c.fails[cur];
        var cell = here.length ? mark(false, "", "broken: " + here.join(", ")) : mark(true, "holds", "");
        var n = firstOf(c.fails);
        var firstCell = n < 0 ? el("span", "rl-na", "never") : jump(n, "step " + n);
        var row = [el("code", null, c.name)];
        if (kind === "conjunct") { row.push(c.layer); }
        return row.concat([cell, firstCell, c.says]);
      });
    }
    box.appendChild(table(["conjunct", "layer", "here", "first broken", "says"], rows(E.conjuncts, "conjunct")));
    box.appendChild(table(["obligation of the step into this state", "here", "first broken", "says"], rows(E.obligations, "obligation")));
  }

  function caseCell(lemma, code) {
    return append(el("span", "rl-case"), ["(", ruleRef(lemma, code), ")"]);
  }

  function stateTable(walk, mv) {
    var rows = [];
    D.machines.forEach(function (m, p) {
      var same = mv.match.m[p];
      rows.push([el("strong", null, m), caseCell(walk.lemma, mv.cases.m[p]), mv.state.local[p],
        mark(same, "as in " + (walk.lemma === 0 ? "the snapshot state" : "the final state"), "not yet")]);
    });
    D.chans.forEach(function (c, j) {
      var same = mv.match.b[j];
      rows.push([el("strong", null, c), caseCell(walk.lemma, mv.cases.b[j]),
        chips(mv.state.buf[j], function (x) { return /^R\d+$/.test(x); }),
        mark(same, "as in " + (walk.lemma === 0 ? "the snapshot state" : "the final state"), "not yet")]);
    });
    return table(["", "rule", "shadow", walk.lemma === 0 ? "vs the snapshot state" : "vs the final state"], rows);
  }

  function showLemma(lemma) {
    var box = byId("rl-lemma" + lemma);
    clear(box);
    var k = D.snaps[snapIdx];
    var walk = D.walks.filter(function (w) { return w.snap === k && w.lemma === lemma; })[0];
    if (!walk) { return; }
    if (!walk.available) { box.appendChild(el("p", "rl-empty", walk.why)); return; }
    var head = el("p");
    append(head, ["Snapshot " + k + ": the initial state is state " + walk.t0 + ", the final state is state " + walk.tf + ". ",
      walk.ok ? mark(true, "the shadow network keeps step to the end", "") : mark(false, "", "the shadow network breaks at step " + walk.verdictStep)]);
    box.appendChild(head);
    if (cur < walk.t0) {
      box.appendChild(el("p", "rl-empty", "Before the snapshot starts: the shadow network begins at state " + walk.t0 +
        ", just before the first machine turns red" + (lemma === 1 ? " (in the snapshot state)." : " (in the initial state).")));
      return;
    }
    var mv = null;
    var idx = -1;
    for (var i = 0; i < walk.moves.length; i++) {
      if (walk.moves[i].step <= cur) { mv = walk.moves[i]; idx = i; }
    }
    if (!mv) { return; }
    var last = walk.moves[walk.moves.length - 1];
    var stopped = !walk.ok && cur > last.step;
    var moveBox = el("div", "rl-move" + (mv.kind === "skip" ? " skip" : "") + (mv.ok ? "" : " broken"));
    if (mv.step === cur || (cur === walk.t0 && mv.kind === "start")) {
      append(moveBox, [el("strong", null, mv.kind === "start" ? "Start: " : "Step " + cur + ": "), mv.text]);
    } else if (cur >= walk.tf && walk.ok) {
      append(moveBox, [el("strong", null, "Done: "), "the snapshot completed at state " + walk.tf +
        "; the shadow network " + (lemma === 0 ? "ended in the snapshot state." : "ended in the final state.")]);
    } else {
      append(moveBox, [el("strong", null, "Last move (step " + mv.step + "): "), mv.text]);
    }
    if (mv.fired.length && (mv.step === cur)) {
      var ul = el("ul", "rl-fired");
      mv.fired.forEach(function (f) { ul.appendChild(el("li", null, f)); });
      append(moveBox, [el("br"), mv.kind === "start" ? "The rules in force:" : "Rules that now apply:", ul]);
    }
    if (!mv.ok) {
      append(moveBox, [el("br"), append(el("strong", "rl-no"), ["✗ The shadow network breaks: rule (", ruleRef(lemma, mv.rule), ")"]),
        mv.ruleText ? " — “" + mv.ruleText + "”. " : ". ", mv.why]);
    }
    if (stopped) {
      append(moveBox, [el("br"), el("span", "rl-no", "✗ The shadow network stopped at step " + last.step + ".")]);
    }
    box.appendChild(moveBox);
    if (mv.state) {
      var m = mv.match.m.filter(function (x) { return x; }).length + mv.match.b.filter(function (x) { return x; }).length;
      var total = mv.match.m.length + mv.match.b.length;
      box.appendChild(el("p", "rl-converge", m + " of " + total + " machines and buffers are already as in " +
        (lemma === 0 ? "the snapshot state" : "the final state") + "."));
      box.appendChild(stateTable(walk, mv));
    }
    if (!mv.ok && mv.rules) {
      box.appendChild(el("p", null, "What rules (i)–(iii) define at this moment instead:"));
      var rows = [];
      D.machines.forEach(function (mm, p) { rows.push([mm, mv.rules.local[p]]); });
      D.chans.forEach(function (c, j) { rows.push([c, chips(mv.rules.buf[j], function (x) { return /^R\d+$/.test(x); })]); });
      box.appendChild(table(["", "by the rules"], rows));
    }
    if (idx >= 0 && mv.step === cur) { box.setAttribute("data-move", mv.kind); } else { box.removeAttribute("data-move"); }
  }

  function showList() {
    var items = list.children;
    for (var i = 0; i < items.length; i++) { items[i].classList.toggle("current", i === cur); }
    var li = items[cur];
    if (li && list.scrollHeight > list.clientHeight) {
      // keep the current step in view inside the list (the page itself does not move)
      list.scrollTop = Math.max(0, li.offsetTop - list.offsetTop - list.clientHeight / 2);
    }
  }

  function show() {
    var st = D.states[cur];
    slider.value = String(cur);
    byId("rl-stepno").textContent = cur + " / " + N;
    var hash = "#step=" + cur + (D.snaps.length > 1 ? "&snapshot=" + D.snaps[snapIdx] : "") +
      (RUNS.length > 1 ? "&run=" + runIdx : "");
    var link = byId("rl-permalink");
    link.href = hash;
    if (window.location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { window.location.hash = hash; }
    }
    document.body.setAttribute("data-step", String(cur));
    showNow();
    showDiagram();
    showMachines(st);
    showBuffers(st);
    showRecorded(st);
    showProps();
    showEveryN();
    showLemma(0);
    showLemma(1);
    showList();
  }

  var first = readHash();
  cur = first;
  useRun(runIdx);
})();
