// The browser table: draws the view the peer sends and sends keys and drops back.
// No game logic here: whether a move is legal, where a card goes, what a race did, all come
// from the peer (p2p_nertz/web/model.py is the wire). Cards are drawn by this file (SVG suits,
// CSS faces): no image files.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  // Each suit as our own path in a 100x100 box.
  const SUIT_PATHS = {
    H: ["M50 92 C22 68 4 50 4 30 A23 23 0 0 1 50 20 A23 23 0 0 1 96 30 C96 50 78 68 50 92 Z"],
    D: ["M50 4 L88 50 L50 96 L12 50 Z"],
    S: ["M50 4 C78 30 96 46 96 62 A21 21 0 0 1 56 72 L64 96 L36 96 L44 72 A21 21 0 0 1 4 62 " +
        "C4 46 22 30 50 4 Z"],
    C: ["M44 58 L36 96 L64 96 L56 58 Z"],
  };
  const CLUB_CIRCLES = [[50, 26, 20], [27, 58, 20], [73, 58, 20], [50, 50, 10]];
  // A finger taps (a phone's newcomer was told to "click where it goes").
  const TAP = matchMedia("(pointer: coarse)").matches ? "tap" : "click";
  const KEYS = { Enter: "ENTER", Escape: "ESC", Backspace: "BACKSPACE", ArrowUp: "UP",
                 ArrowDown: "DOWN", ArrowLeft: "LEFT", ArrowRight: "RIGHT" };
  const AIM = 64; // px: a drop this near a pile may go there (the nearest that fits wins)

  const stats = { frames: 0, start: performance.now(), longest: 0, drops: [], handled: [],
                  views: 0, renderMs: 0 };
  window.nertzStats = stats;
  let ws = null;
  let view = null;
  let drag = null; // {pile, index, x0, y0, el, clone, moved, dx, dy}
  let pending = []; // drops sent: {id, t0, clone, code}
  let nextId = 1;
  let lastMessage = null;

  const $ = (sel) => document.querySelector(sel);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const elWith = (tag, cls, children) => { const e = el(tag, cls); e.append(...children); return e; };

  // -- names: drawn isolated, so that a right-to-left one never moves the text around it.
  // (Session 31: a Hebrew name's header "שרה (seat 1) · 12 pts" was drawn with the digits and
  // the dots taking the name's direction; two Hebrew callers "A, B" read "B ,A".) A name is a
  // <bdi> (laid out on its own, its direction its own): the lobby's, which are names alone,
  // always; in the peer's words ("Ann (seat 1)", the status line, the announcements), each
  // player's name (the view's ``names``) that could reorder them: one with right-to-left
  // letters, or a bidi control (the name rule refuses those: docs/protocol.md §3.2; the page
  // isolates them all the same). A name that could not is left a plain part of the text.
  const bdi = (name) => el("bdi", "name", name);
  // (Right-to-left letters: the blocks of Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan,
  // Mandaic and their presentation forms, then the historic and Adlam planes' right-to-left
  // blocks; by code point, as every browser reads a class, not by script name.)
  const RTL = new RegExp("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u{10800}-\u{10fff}" +
    "\u{1e800}-\u{1efff}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", "u");
  // ``text`` in parts: the names in it that could reorder it apart (odd places).
  function nameParts(text, names) {
    const risky = [...new Set(names.filter((n) => n && RTL.test(n)))]
      .sort((a, b) => b.length - a.length)
      .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    text = text ?? "";
    return risky.length && text ? text.split(new RegExp(`(${risky.join("|")})`, "u")) : [text];
  }
  const playerNames = () => (view && view.names ? view.names : []);
  // ``text``'s nodes, each such name in a <bdi>.
  const named = (text, names = playerNames()) => nameParts(text, names)
    .map((part, i) => (i % 2 ? bdi(part) : part)).filter((part) => part !== "");
  // (A tooltip is plain text: such a name between Unicode's isolates, FSI and PDI.)
  const isolated = (text) => nameParts(text, playerNames())
    .map((part, i) => (i % 2 ? `\u2068${part}\u2069` : part)).join("");
  const listed = (texts) => texts.flatMap((t, i) => (i ? [", ", ...named(t)] : named(t)));

  function suitSvg(suit, cls) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("aria-hidden", "true");
    if (cls) svg.setAttribute("class", cls);
    for (const d of SUIT_PATHS[suit] || []) {
      const p = document.createElementNS(SVG, "path");
      p.setAttribute("d", d);
      svg.appendChild(p);
    }
    if (suit === "C") {
      for (const [cx, cy, r] of CLUB_CIRCLES) {
        const c = document.createElementNS(SVG, "circle");
        c.setAttribute("cx", cx); c.setAttribute("cy", cy); c.setAttribute("r", r);
        svg.appendChild(c);
      }
    }
    return svg;
  }

  function cardEl(card) {
    if (!card) return el("div", "card back");
    const e = el("div", "card" + (card.red ? " red" : ""));
    e.dataset.code = card.code;
    e.setAttribute("aria-label", card.text);
    e.title = card.text;
    for (const where of ["top", "bottom"]) {
      const corner = el("span", "corner " + where);
      corner.appendChild(el("span", "rank", card.rank));
      if (card.suit) corner.appendChild(suitSvg(card.suit));
      e.appendChild(corner);
    }
    if (card.suit) e.appendChild(suitSvg(card.suit, "pip"));
    return e;
  }

  // -- drawing ---------------------------------------------------------------------------
  function pileEl(key, cls, label) {
    const p = el("div", "pile " + cls);
    p.dataset.pile = key;
    if (label) p.appendChild(el("span", "label", label));
    return p;
  }

  function drawTableau(player, mine) {
    const t = player.tableau;
    const box = el("div", "player " + (mine ? "me" : "other"));
    box.dataset.seat = player.seat;
    const h = el("h3");
    const sw = el("span", "swatch");
    sw.style.background = `var(--p${player.seat % 8})`;
    h.appendChild(sw);
    // (Its game total, named: "bot1 (seat 0) · 0" left a newcomer guessing what 0 was; the
    // words are the terminal's, ui/view.py points_words: the game's, scored at a round's end.)
    let head = ` · ${player.points}`;
    if (player.link !== "ok") head += ` · ${player.link}`;
    // (Stuck by a pass on its behalf: it played nothing while everyone else was stuck.)
    if (player.passed) head += " · passed for";
    else if (player.stuck) head += " · stuck";
    // (A pass is its last action too: "stuck · stuck" said it twice.)
    if (!mine && player.last && !(player.stuck && player.last === "stuck")) head += ` · ${player.last}`;
    h.append(...named(player.name), head);
    box.appendChild(h);
    if (!t) return box;
    const frozen = new Set(view.frozen);
    const row = el("div", "row tops");
    const nerts = pileEl("n", "nerts", mine ? "n" : "");
    if (t.nerts.top) nerts.appendChild(cardEl(t.nerts.top));
    else nerts.classList.add("empty");
    // Our own pile emptied: say what to do now, as the terminal does ("empty: call Nerts").
    const called = mine && !t.nerts.count ? "empty: call Nerts!" : `Nerts ${t.nerts.count}`;
    nerts.appendChild(el("span", "count", called));
    nerts.dataset.count = t.nerts.count;
    row.appendChild(nerts);
    t.work.forEach((cards, i) => {
      const key = String(i + 1);
      const pile = pileEl(key, "work", mine ? key : "");
      if (!cards.length) pile.classList.add("empty");
      cards.forEach((c, j) => {
        const e = cardEl(c);
        e.style.top = `calc(var(--fan) * ${j})`;
        e.dataset.index = j;
        pile.appendChild(e);
      });
      pile.style.height = `calc(var(--ch) + var(--fan) * ${Math.max(0, cards.length - 1)})`;
      row.appendChild(pile);
    });
    box.appendChild(row);
    const row2 = row;
    if (mine) row.appendChild(el("span", "gap"));
    const stock = pileEl("s", "stock", mine ? "s" : "");
    if (t.stock) stock.appendChild(cardEl(null));
    else stock.classList.add("empty");
    stock.appendChild(el("span", "count", `stock ${t.stock}`));
    if (mine) row2.appendChild(stock);
    const waste = pileEl("w", "waste", mine ? "w" : "");
    if (t.waste.count) {
      const top = t.waste.top[t.waste.top.length - 1];
      waste.appendChild(cardEl(top));
    } else waste.classList.add("empty");
    waste.appendChild(el("span", "count", `waste ${t.waste.count}`));
    row2.appendChild(waste);

    for (const p of box.querySelectorAll(".pile")) {
      if (frozen.has(p.dataset.pile) && mine) p.classList.add("frozen");
      if (mine && view.selected === p.dataset.pile) p.classList.add("selected");
      if (mine && p.dataset.pile !== "s") p.dataset.target = p.dataset.pile;
    }
    if (mine) {
      // What may be picked up: the Nerts and waste tops, and any card of a work pile (with
      // the run above it). Whether it may go anywhere is the peer's to say.
      const tops = box.querySelectorAll(
        ".nerts .card:last-of-type, .waste .card:last-of-type, .work .card");
      for (const c of tops) c.dataset.drag = "1";
    }
    return box;
  }

  function drawLake() {
    const box = $("#foundations");
    box.replaceChildren();
    // An empty lake said nothing of what it is for (a newcomer's first look at the table).
    if (!view.lake.length)
      box.appendChild(el("p", "hint", "Aces go here: each starts a pile that everyone builds " +
        "up, in suit, to the King. Each of your cards here is +1."));
    for (const f of view.lake) {
      const slot = el("div", "foundation");
      const c = cardEl(f.top);
      c.classList.add("lake");
      if (f.air) c.classList.add("air");
      c.style.borderColor = `var(--p${f.top_owner % 8})`;
      c.dataset.owner = f.top_owner;
      c.dataset.foundation = f.id;
      slot.appendChild(c);
      slot.appendChild(el("span", "height", String(f.height)));
      // (Whose the top card is, in words: a border's colour alone left a newcomer guessing.)
      const owner = view.players[f.top_owner];
      slot.title = isolated(`${f.top.text}, laid by ${owner ? owner.name : `seat ${f.top_owner}`}` +
        ` (${f.air ? "in the air" : "final"}) · ${f.height} cards in the pile · foundation ${f.id}`);
      box.appendChild(slot);
    }
  }

  function drawBoard() {
    const b = view.board;
    const box = $("#board");
    if (!b) { box.hidden = true; box.replaceChildren(); return; }
    box.hidden = false;
    box.replaceChildren();
    const how = b.status === "nerts" ? ["Nerts! called by ", ...listed(b.callers)]
      : [b.status === "blocked" ? "blocked: nobody could play" : "void: the game was abandoned"];
    box.appendChild(elWith("h2", "", [`Round ${b.round} over — `, ...how]));
    const next = el("div", "next");
    if (b.result) {
      next.appendChild(elWith("p", "result", ["Game over — winner: ", ...listed(b.result.winners),
        ` with ${b.result.top} (${b.result.decided})` + (b.provisional ? " — provisional" : "")]));
      const leave = el("button", "", "leave (q)");
      leave.onclick = () => key("q");
      next.appendChild(leave);
    } else {
      const go = el("button", "", "next round (Enter)");
      go.onclick = () => key("ENTER");
      next.appendChild(go);
      if (view.countdown !== null)
        next.appendChild(el("p", "countdown", `next round in ${view.countdown} s`));
    }
    box.appendChild(next);
    // The columns say what each number is (a newcomer read "lake +16, Nerts left −14 (7)"
    // and guessed); the bonus and the false call only when this game or round has them.
    const bonus = b.columns.includes("bonus"), falseCall = b.columns.includes("false call");
    const table = el("table");
    const head = el("tr");
    for (const t of b.headings) head.appendChild(el("th", "", t));
    table.appendChild(head);
    for (const r of b.rows) {
      const tr = el("tr");
      tr.dataset.seat = r.seat;
      tr.appendChild(elWith("td", "", named(r.name)));
      if (!r.played) { tr.appendChild(el("td", "", "sat out")); table.appendChild(tr); continue; }
      tr.appendChild(el("td", "plus", `+${r.lake}`));
      tr.appendChild(el("td", r.nerts_penalty ? "minus" : "", `${r.nerts_penalty ? "−" : ""}${r.nerts_penalty} (${r.nerts_left})`));
      if (bonus) tr.appendChild(el("td", r.bonus ? "plus" : "", `+${r.bonus}`));
      if (falseCall)
        tr.appendChild(el("td", r.false_call ? "minus" : "", r.false_call ? `−${r.false_call}` : ""));
      tr.appendChild(el("td", "round", (r.round >= 0 ? "+" : "") + r.round));
      tr.appendChild(el("td", "game", String(r.game)));
      table.appendChild(tr);
      const cards = el("tr");
      const td = el("td");
      td.colSpan = b.headings.length;
      const list = el("div", "cards");
      for (const c of r.cards) list.appendChild(cardEl(c));
      td.appendChild(list);
      cards.appendChild(td);
      table.appendChild(cards);
    }
    // The scores and the round's picture side by side where the page is wide: the board
    // of four players scrolled at 1280×720, its picture below the fold.
    const body = el("div", "board-body");
    body.appendChild(table);
    if (b.picture) body.appendChild(drawPicture(b.picture, b.rows));
    box.appendChild(body);
    // The person's pace, and the bots to play next (--practice below the slowest bots' pace).
    if (b.pace) box.appendChild(el("p", "pace", b.pace));
  }

  // Each part of the page is drawn again only when its part of the view changed: the others'
  // moves redraw the lake and their tableaux, not ours (nor a card being picked up).
  const drawn = {};
  function changed(part, value) {
    const text = JSON.stringify(value);
    if (drawn[part] === text) return false;
    drawn[part] = text;
    return true;
  }

  // The lobby: the lobby's view drawn as a page. Every button sends a choice; the peer turns
  // it into the lobby's own keys, so what may happen now (and why not) is decided there.
  let lobbyMode = false;
  function lobbyPick(what) { send(Object.assign({ type: "lobby" }, what)); }
  function cell(tr, text, cls) { const td = el("td", cls, text); tr.appendChild(td); return td; }
  function drawLobby(m) {
    lobbyMode = true;
    $("#table").hidden = true;
    $("#lobby").hidden = false;
    stats.views += 1;
    const me = $("#lobby-me");
    me.replaceChildren(elWith("strong", "", [bdi(m.name)]), " ", el("span", "fp", `(${m.fingerprint})`));
    me.append(m.discovering ? ` · listening for tables on ${m.discovering}` : "");
    const body = $("#lobby-tables tbody");
    body.replaceChildren();
    for (const t of m.listings) {
      const tr = el("tr", t.here ? "here" : "");
      tr.dataset.where = t.where;
      cell(tr, String(t.n));
      const host = cell(tr, t.name ? "" : "(not asked yet)", t.name ? "" : "dim");
      if (t.name) host.append(...named(t.name, [t.host]));
      if (t.deal) host.append(" · ", el("span", "warn", t.deal));
      cell(tr, t.fingerprint, "fp");
      cell(tr, t.seats, t.full ? "bad" : "good");
      cell(tr, t.where, "fp");
      cell(tr, t.found, "dim");
      const go = el("button", "join", t.here ? "here" : "join");
      go.type = "button";
      go.disabled = m.table !== null;
      go.onclick = () => lobbyPick({ do: "join", where: t.where });
      cell(tr, "").appendChild(go);
      body.appendChild(tr);
    }
    $("#lobby-tables").hidden = !m.listings.length;
    $("#lobby-none").textContent = m.listings.length ? "" : (m.discovering
      ? `no table heard on ${m.discovering} yet: create one`
      : "no table known (--peer HOST:PORT, --discover BROADCAST): create one");
    $("#lobby-create").disabled = m.table !== null;
    drawLobbyTable(m);
    const status = $("#lobby-status");
    const names = [m.name, ...m.listings.map((l) => l.host),
      ...(m.table ? m.table.seats.map((x) => x.name) : [])];
    status.replaceChildren(...named(m.status, names));
    status.className = m.refused ? "bad" : "warn";
    const news = $("#lobby-messages");
    news.replaceChildren(...m.messages.map((t) => elWith("li", "", named(t, names))));
  }
  function drawLobbyTable(m) {
    const t = m.table;
    $("#lobby-table").hidden = t === null;
    if (t === null) return;
    $("#lobby-table").dataset.where = t.where;
    const role = t.hosting ? ["you host it"] : ["host: ", t.host ? bdi(t.host) : "?"];
    const seated = t.capacity ? ` · ${t.seats.length}/${t.capacity} seated` : "";
    $("#lobby-title").replaceChildren(`Your table at ${t.where} · `, ...role, seated);
    const body = $("#lobby-seats tbody");
    body.replaceChildren();
    for (const s of t.seats) {
      const tr = el("tr", s.you ? "here" : "");
      tr.dataset.seat = String(s.seat);
      cell(tr, String(s.seat));
      cell(tr, "").append(bdi(s.name), s.you ? " (you)" : "");
      cell(tr, s.fingerprint, "fp");
      cell(tr, s.host ? "host" : "", "dim");
      cell(tr, s.ready ? "✓ ready" : "not ready", s.ready ? "ready good" : "ready warn");
      const last = cell(tr, "");
      if (t.hosting && !s.host) {
        const out = el("button", "remove", "remove");
        out.type = "button";
        out.onclick = () => lobbyPick({ do: "remove", seat: s.seat });
        last.appendChild(out);
      }
      body.appendChild(tr);
    }
    if (!t.seats.length) {
      const tr = el("tr", "");
      cell(tr, "waiting for the host to answer…", "dim").colSpan = 6;
      body.appendChild(tr);
    }
    $("#lobby-rules").replaceChildren(
      ...(t.rules || ["not shown yet"]).map((line) => el("li", t.rules ? "" : "dim", line)));
    const blocker = $("#lobby-blocker");
    blocker.textContent = t.blocker !== null ? t.blocker
      : (t.hosting ? "everybody is ready: start the game" : `everybody is ready: waiting for ${t.host} to start`);
    blocker.className = t.blocker !== null ? "warn" : "good";
    const select = $("#bot-strategy");
    if (changed("strategies", m.strategies)) {
      select.replaceChildren(...m.strategies.map((name) => el("option", "", name)));
      if (m.bot.strategy) select.value = m.bot.strategy;
    }
    const ready = $("#lobby-ready");
    ready.hidden = t.hosting;
    ready.textContent = t.ready ? "not ready after all" : "I am ready";
    ready.onclick = () => lobbyPick({ do: "ready", ready: !t.ready });
    $("#lobby-start").hidden = !t.hosting;
    $("#lobby-start").disabled = !t.can_start;
    $("#lobby-leave").textContent = t.hosting ? "close the table" : "leave the table";
  }
  function setUpLobby() {
    $("#lobby-create").onclick = () => lobbyPick({ do: "create" });
    $("#lobby-start").onclick = () => lobbyPick({ do: "start" });
    $("#lobby-leave").onclick = () => lobbyPick({ do: "leave" });
    const speed = $("#bot-speed");
    speed.oninput = () => { $("#bot-speed-shown").textContent = speed.value; };
    $("#lobby-bot").onsubmit = (ev) => {
      ev.preventDefault();
      lobbyPick({ do: "bot", strategy: $("#bot-strategy").value, speed: Number(speed.value) });
    };
  }

  // The round as a picture, from the signed events (the same for everyone): each player's
  // cards in the lake over the round's plays, a cross where a race was lost, a dot where one
  // was won, a flag where a Nerts pile emptied.
  function drawPicture(pic, rows) {
    const W = 600, H = 180, L = 28, B = 22, T = 22;
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("class", "picture");
    svg.setAttribute("role", "img");
    const top = Math.max(1, ...pic.lake.map((pts) => (pts.length ? pts[pts.length - 1][1] : 0)));
    const x = (when) => L + ((W - L - 8) * when) / Math.max(1, pic.plays);
    const y = (n) => H - B - ((H - B - T) * n) / top;
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    add("line", { x1: L, y1: H - B, x2: W - 8, y2: H - B, class: "axis" });
    add("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" });
    add("text", { x: L - 4, y: T + 10, class: "tick", "text-anchor": "end" }, String(top));
    add("text", { x: L - 4, y: H - B, class: "tick", "text-anchor": "end" }, "0");
    add("text", { x: W - 8, y: H - 6, class: "tick", "text-anchor": "end" },
        `${pic.plays} plays (in the signed order)`);
    const at = (seat, when) => {
      let n = 0;
      for (const [w, c] of pic.lake[seat]) if (w <= when) n = c;
      return n;
    };
    pic.lake.forEach((pts, seat) => {
      const colour = `var(--p${seat % 8})`;
      let d = `M${x(0)} ${y(0)}`;
      for (const [w, c] of pts) d += ` H${x(w)} V${y(c)}`;
      d += ` H${x(pic.plays)}`;
      const line = add("path", { d, class: "line", "data-seat": seat });
      line.style.stroke = colour;
      for (const w of pic.lost[seat]) {
        const cx = x(w), cy = y(at(seat, w));
        const m = add("path", { d: `M${cx - 4} ${cy - 4} L${cx + 4} ${cy + 4} M${cx - 4} ${cy + 4} L${cx + 4} ${cy - 4}`,
                                class: "lost" });
        m.style.stroke = colour;
      }
      for (const w of pic.won[seat]) {
        const dot = add("circle", { cx: x(w), cy: y(at(seat, w)), r: 3.5, class: "won" });
        dot.style.fill = colour;
      }
      const e = pic.emptied[seat];
      if (e !== null) {
        const flag = add("path", { d: `M${x(e)} ${y(at(seat, e))} v-16 l9 4 l-9 4`, class: "flag" });
        flag.style.stroke = colour;
      }
    });
    const figure = el("figure", "round-picture");
    figure.appendChild(svg);
    const legend = el("figcaption");
    for (const r of rows) {
      const item = el("span", "legend");
      item.dataset.seat = r.seat;
      const sw = el("span", "swatch");
      sw.style.background = `var(--p${r.seat % 8})`;
      item.appendChild(sw);
      const flag = pic.emptied[r.seat] !== null ? " · Nerts pile emptied" : "";
      item.append(...named(r.name),
        `: races won ${pic.won[r.seat].length}, lost ${pic.lost[r.seat].length}${flag}`);
      legend.appendChild(item);
    }
    figure.appendChild(legend);
    return figure;
  }

  function render() {
    const t0 = performance.now();
    const me = view.seat;
    const mineNow = me === null ? null : view.players[me];
    const shared = [view.frozen, view.selected];
    // (A person who left stopped their own game, not the table's: "playing · the game has
    // ended" read as a contradiction, the others still at it.)
    // (Nor "game over · the game has ended", the heading saying it already.)
    const ended = mineNow && mineNow.link === "left" ? " · you left the game"
      : view.phase === "over" ? "" : " · the game has ended";
    $("#round").textContent = view.heading + (view.turn ? ` · ${view.turn}` : "") +
      (view.gone ? ` · ${view.gone}` : view.final ? ended : "") +
      (view.alone ? " · nobody else is left" : "");
    // The others one by one: a bot's move redraws its own tableau only.
    const others = $("#others");
    const seats = view.players.filter((p) => p.seat !== me);
    if (others.children.length !== seats.length) others.replaceChildren(
      ...seats.map(() => el("div", "player other")));
    seats.forEach((p, i) => {
      if (changed(`other${p.seat}`, p)) others.replaceChild(drawTableau(p, false), others.children[i]);
    });
    if (changed("lake", view.lake)) drawLake();
    if (changed("mine", [mineNow, shared])) {
      const mine = $("#mine");
      mine.replaceChildren();
      if (mineNow) mine.appendChild(drawTableau(mineNow, true));
      if (drag && drag.moved) hideDragged();
      for (const p of pending) hidePending(p);
    }
    const status = $("#status");
    if (!document.body.classList.contains("down")) {  // (else it says the peer has stopped)
      // A card picked by a click: the peer's words name its keys; the pointer's way too.
      const picked = view.selected !== null && view.command === null && / picked: /.test(view.status);
      status.replaceChildren(...(view.command !== null ? [`: ${view.command}▏`]
        : named(picked ? `${view.status} · or ${TAP} where it goes` : view.status)));
      status.className = view.refused ? "illegal" : "";
    }
    if (changed("messages", view.messages)) {
      const list = $("#messages");
      list.replaceChildren(...view.messages.map((m) => elWith("li", "", named(m))));
    }
    const newest = view.messages[view.messages.length - 1] || null;
    if (newest !== lastMessage && lastMessage !== null && newest &&
        /lost (to|the race)|Nerts!|rotated|dropped|left the game|is back|plays again/.test(newest)) toast(newest);
    lastMessage = newest;
    $("#quit").textContent = /leave the game\?/.test(view.status) ? "yes, leave" : "leave";
    // A call with cards left is asked about first ("… to call anyway"): the button says what a
    // second click does, as the leave button does.
    $("#call").textContent = /to call anyway/.test(view.status) ? "yes, call Nerts" : "Nerts!";
    // A newcomer emptied their pile and never called: the button asks for the click then.
    $("#call").classList.toggle("due", view.phase === "play" && !!mineNow &&
      !!mineNow.tableau && mineNow.tableau.nerts.count === 0);
    // What only a key did: stuck, Nerts, rotate (when the rules have it), and the end of a
    // game whose other member is gone (its button asks first, as the key does).
    // Over (or left), nothing is left to pass or call: the buttons go ("stuck" and "Nerts!"
    // stayed under the game's end, for a newcomer to try).
    $("#stuck").hidden = $("#call").hidden = !!view.final;
    $("#rotate").hidden = !view.rotate_alone || !!view.final;
    $("#abandon").hidden = view.abandon === null;
    const ending = /end the game on the totals\?/.test(view.status);
    $("#abandon").textContent = ending ? "yes, end it" : "end the game";
    $("#abandon").dataset.key = ending ? "y" : "a";
    // A spectator or a replay: every tableau drawn alike, no tableau of ours.
    document.body.classList.toggle("watching", me === null);
    const bar = $("#replay");
    bar.hidden = !view.replay;
    if (view.replay) {
      $("#replay-at").textContent = `step ${view.replay.at} of ${view.replay.total}` +
        ` · audit: ${view.replay.verdict}`;
      $("#replay-legend p").textContent = view.replay.legend;
      $("#quit").textContent = "stop";
    }
    if (changed("board", [view.board, view.countdown, view.provisional])) drawBoard();
    stats.renderMs = Math.max(stats.renderMs, performance.now() - t0);
  }

  let toastTimer = null;
  function toast(text) {
    const t = $("#toast");
    t.replaceChildren(...named(text));
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 2500);
  }

  // -- the connection ----------------------------------------------------------------------
  // A connection that closes without the peer's last word (the peer killed or restarted with
  // `nertz resume --web`, a network blip, a laptop asleep) is tried again: 0.5 s, then twice
  // as long each time up to 5 s, for as long as the page is open; the next view the peer
  // sends takes the table up again. The peer's last word ({type: "closed"}: the game is over,
  // the player left, the table is gone) says why it is done, and the page stops trying.
  // A peer killed or crashed says no last word: after LOST_AFTER of failed tries the status
  // says what the person can do (a player's page: the view's `unanswered`, `nertz resume LOG
  // --web` with its log named), and the tries go on, so that a resume is still picked up.
  // `?lost_after=SECONDS` in the page's address sets LOST_AFTER (tests).
  const RETRY_FIRST = 500, RETRY_MOST = 5000;
  const LOST_AFTER = 1000 * (Number(new URLSearchParams(location.search).get("lost_after")) || 30);
  // (A page whose views name no log, a spectator's or a replay's: how it stopped is all.)
  const UNANSWERED = "the nertz program is not answering — if it stopped, its terminal says why";
  let retryIn = RETRY_FIRST;
  let retryTimer = null;
  let farewell = null; // the peer's last word, once said
  let everOpen = false;
  let lostTimer = null; // running from the first failed try until a connection opens
  stats.reconnects = 0;
  stats.retrying = false;
  stats.unanswered = false;
  stats.tries = 0;
  function unanswered() {
    return view && view.unanswered ? view.unanswered : UNANSWERED;
  }
  function notAnswering() {
    lostTimer = null;
    if (farewell !== null) return;
    stats.unanswered = true;
    $("#status").textContent = unanswered();
  }
  function connect() {
    retryTimer = null;
    stats.retrying = false;
    stats.tries += 1;
    ws = new WebSocket(`ws://${location.host}${location.pathname}ws`);
    let opened = false;
    ws.onopen = () => {
      opened = true;
      if (everOpen) stats.reconnects += 1;
      everOpen = true;
      retryIn = RETRY_FIRST;
      clearTimeout(lostTimer);
      lostTimer = null;
      stats.unanswered = false;
      $("#link").textContent = "connected to your nertz program";
      $("#link").className = "link";
      document.body.classList.remove("down");
      $("#status").textContent = "";
      $("#status").className = "";
      if (view) drawSoon(null, null); // (the status line is the view's again)
    };
    ws.onclose = () => {
      ws = null;
      // Drops the peer never answered go back where they came from.
      for (const p of pending) snapBack(p.clone, p.origin);
      pending = [];
      // Nothing here moves meanwhile: the table is greyed and takes no pointer, and the
      // status says why (the last view stays, so a finished game's board can still be read).
      document.body.classList.add("down");
      const link = $("#link"), status = $("#status");
      if (farewell !== null) {
        // Its last word (the game over, say): no fault, nothing to retry; not the red of a
        // lost connection ("disconnected" in red ended every first game).
        link.className = "link";
        link.textContent = "stopped";
        status.className = "";
        status.textContent = farewell;
        return;
      }
      link.className = "link down";
      status.className = "illegal";
      const wait = retryIn;
      retryIn = Math.min(RETRY_MOST, retryIn * 2);
      const next = `${(wait / 1000).toFixed(1)} s`;
      // (Never opened: the peer is not up yet, or it has too many pages open.)
      link.textContent = everOpen ? `reconnecting… (next try in ${next})`
        : `not connected: trying again in ${next}`;
      if (lostTimer === null && !stats.unanswered) {
        lostTimer = setTimeout(notAnswering, LOST_AFTER);
      }
      status.textContent = stats.unanswered ? unanswered()
        : everOpen ? "the connection to the nertz program was lost: reconnecting…"
        : "no connection to the nertz program: it is not up yet, or it has too many pages open " +
          "(close its other tabs)";
      retryTimer = setTimeout(connect, wait);
      stats.retrying = true;
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "error") { toast(m.error); return; }
      if (m.type === "closed") { farewell = m.text; return; }
      if (m.type === "waiting") { $("#status").textContent = m.text; return; }
      if (m.type === "lobby") { drawLobby(m); return; }
      lobbyMode = false;
      $("#lobby").hidden = true;
      $("#table").hidden = false;
      if (m.type !== "view") return;
      view = m;
      stats.views += 1;
      drawSoon(m.ack, m.handled_ms);
    };
  }
  // (A page woken from sleep, or brought back to the front, tries at once.)
  function tryNow() {
    if (retryTimer === null || farewell !== null) return;
    clearTimeout(retryTimer);
    connect();
  }
  // At most one drawing a frame: views can come faster than the screen shows them (eight
  // players, bots at full speed), and only the latest one is worth drawing. A drop the peer
  // answered is settled once the view with its answer is drawn.
  let drawQueued = false;
  let toSettle = null;
  function drawSoon(ack, handled) {
    if (ack !== null) toSettle = [ack, handled];
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      render();
      if (toSettle !== null) {
        const [a, h] = toSettle;
        toSettle = null;
        settle(a, h);
      }
    });
  }
  function send(obj) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj)); }
  function key(k) { send({ type: "key", key: k }); }

  // -- moving cards ------------------------------------------------------------------------
  function runOf(card) {
    const pile = card.closest(".pile");
    if (!pile.classList.contains("work")) return [card];
    const i = Number(card.dataset.index);
    return [...pile.querySelectorAll(".card")].filter((c) => Number(c.dataset.index) >= i);
  }

  function hideDragged() {
    const pile = document.querySelector(`#mine .pile[data-pile="${drag.pile}"]`);
    if (!pile) return;
    for (const c of pile.querySelectorAll(".card")) {
      if (drag.pile !== "n" && drag.pile !== "w" && Number(c.dataset.index) < drag.index) continue;
      if ((drag.pile === "n" || drag.pile === "w") && c !== pile.querySelector(".card:last-of-type")) continue;
      c.classList.add("ghost");
    }
  }

  function hidePending(p) {
    const c = document.querySelector(`#mine .pile[data-pile="${p.pile}"] .card[data-code="${p.code}"]`);
    if (c) for (const r of runOf(c)) r.classList.add("ghost");
  }

  function startDrag() {
    const run = runOf(drag.el);
    const first = run[0].getBoundingClientRect();
    const clone = el("div", "dragging");
    clone.style.left = `${first.left}px`;
    clone.style.top = `${first.top}px`;
    for (const c of run) {
      const copy = c.cloneNode(true);
      const r = c.getBoundingClientRect();
      copy.style.position = "absolute";
      copy.style.left = "0px";
      copy.style.top = `${r.top - first.top}px`;
      clone.appendChild(copy);
    }
    clone.style.width = `${first.width}px`;
    document.body.appendChild(clone);
    drag.clone = clone;
    drag.origin = { left: first.left, top: first.top };
    drag.moved = true;
    hideDragged();
  }

  function targetsAt(x, y, source) {
    const found = [];
    for (const t of document.querySelectorAll("#mine [data-target], #lake[data-target]")) {
      if (t.dataset.target === source) continue;
      const r = t.getBoundingClientRect();
      const dx = Math.max(r.left - x, 0, x - r.right);
      const dy = Math.max(r.top - y, 0, y - r.bottom);
      const d = Math.hypot(dx, dy);
      if (d <= AIM) found.push([d, t.dataset.target]);
    }
    found.sort((a, b) => a[0] - b[0]);
    return found.map((f) => f[1]);
  }

  function snapBack(clone, to) {
    clone.classList.add("returning");
    const r = clone.getBoundingClientRect();
    clone.style.transform = `translate(${to.left - r.left}px, ${to.top - r.top}px)`;
    setTimeout(() => { clone.remove(); unghost(); }, 260);
  }
  function unghost() { for (const g of document.querySelectorAll(".ghost")) g.classList.remove("ghost"); }

  function settle(ack, handled) {
    const now = performance.now();
    const done = pending.filter((p) => p.id <= ack);
    pending = pending.filter((p) => p.id > ack);
    for (const p of done) {
      stats.drops.push(now - p.t0);
      if (handled !== null && handled !== undefined) stats.handled.push(handled);
      // Still where it was picked from: the peer refused it (the status says why): back it goes.
      const still = document.querySelector(
        `#mine .pile[data-pile="${p.pile}"] .card[data-code="${p.code}"]`);
      if (still) { still.classList.add("ghost"); snapBack(p.clone, still.getBoundingClientRect()); }
      else p.clone.remove();
    }
  }

  function onDown(ev) {
    if (ev.button > 0) return;
    const place = ev.target.closest("#mine .pile, #lake");
    if (!place) return;
    const card = ev.target.closest("#mine .card[data-drag]");
    // Where it went down is kept now: the page may be drawn again before the button is up.
    drag = { place: place.id === "lake" ? "l" : place.dataset.pile, pile: null, moved: false,
             x0: ev.clientX, y0: ev.clientY };
    if (card) {
      Object.assign(drag, { pile: card.closest(".pile").dataset.pile, el: card,
                            index: Number(card.dataset.index || 0), code: card.dataset.code });
    }
    ev.preventDefault();
  }
  function onMove(ev) {
    if (!drag) return;
    const dx = ev.clientX - drag.x0;
    const dy = ev.clientY - drag.y0;
    if (!drag.el || (!drag.moved && Math.hypot(dx, dy) < 6)) return;
    if (!drag.moved) startDrag();
    drag.clone.style.transform = `translate(${dx}px, ${dy}px)`;
  }
  // Click-then-click: a click on a pile is its key (the peer keeps what was picked), so two
  // clicks on the same card (a double-click) send it to the lake, as the same key twice does.
  function onUp(ev) {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (!d.moved) { key(d.place); return; }
    const r = d.clone.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + Math.min(r.height, 40) / 2;
    const targets = targetsAt(x, y, d.pile);
    if (!targets.length) { snapBack(d.clone, d.origin); return; }
    const id = nextId++;
    pending.push({ id, t0: performance.now(), clone: d.clone, code: d.code, pile: d.pile,
                   origin: d.origin });
    // From a work pile: the run grabbed, the card picked and those above it (the peer moves
    // exactly that run, or says why not).
    const count = /^[1-6]$/.test(d.pile) ? runOf(d.el).length : 0;
    send({ type: "drop", from: d.pile, to: targets, id, count });
  }


  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target.closest && ev.target.closest("input, select, textarea")) return; // (a form's own)
    // Enter or Space on a focused button is that button's (the keyboard's way to click it):
    // sent on as keys too, Space turned the stock and Enter cleared what the button had said.
    if ((ev.key === "Enter" || ev.key === " ") && ev.target.closest && ev.target.closest("button"))
      return;
    // The help open covers the table: a key is the help's. Esc, ?, h and q close it (q asked
    // "leave the game?" of a person who meant to leave the help); c is the page's contrast;
    // every other key is left to the help itself (the arrows and Space scroll it): none is
    // sent to the peer, to act on a table the person cannot see.
    if (!$("#help").hidden) {
      if (["Escape", "?", "h", "q"].includes(ev.key)) { ev.preventDefault(); toggleHelp(); }
      else if (ev.key === "c") document.body.classList.toggle("contrast");
      return;
    }
    if (!lobbyMode && (!view || view.command === null)) {
      if (ev.key === "c") { document.body.classList.toggle("contrast"); return; }
      // The page's own help (the peer's help screen would eat the next key or click).
      if (ev.key === "?" || ev.key === "h") { toggleHelp(); return; }
    }
    const k = KEYS[ev.key] || (ev.key.length === 1 ? ev.key : null);
    if (k === null) return;
    ev.preventDefault();
    key(k);
  }
  // The help open covers the table, and owns the pointer as it owns the keys: a press off it
  // (a card at the table's edge it does not cover, a button) closes it and does nothing else,
  // its click swallowed with it (a click at a card's edge picked or played it unseen). The
  // help's own button and the contrast's are theirs (as ? and c are).
  let offHelp = false;
  function onDownOffHelp(ev) {
    offHelp = !$("#help").hidden && !ev.target.closest("#help, #help-button, #contrast");
    if (!offHelp) return;
    ev.preventDefault();
    ev.stopImmediatePropagation();
    toggleHelp();
  }
  function onClickOffHelp(ev) {
    if (!offHelp) return;
    offHelp = false;
    ev.preventDefault();
    ev.stopImmediatePropagation();
  }
  function toggleHelp() {
    const help = $("#help");
    // The rules in brief, with this game's numbers: the peer's own words (the terminal's
    // "how to play" page), a paragraph for each group of lines.
    const lines = view && view.how_to_play;
    // (The keys' list names this game's work piles: 1-4 by default, not 1-6.)
    if (view) for (const k of document.querySelectorAll("#help kbd.piles")) k.textContent = view.work_piles;
    // A spectator's or a replay's page (no seat of ours): its words, not a player's drags
    // and keys (session 44: "Drag a card…" on a page where nothing plays).
    const watching = Boolean(view) && view.seat === null;
    for (const p of document.querySelectorAll("#help .player-help")) p.hidden = watching;
    for (const p of document.querySelectorAll("#help .watcher-help")) p.hidden = !watching;
    if (help.hidden && lines && changed("how_to_play", lines)) {
      const paragraphs = lines.join("\n").split(/\n\s*\n/).filter((p) => p.trim());
      $("#how-to-play").replaceChildren(...paragraphs.map((p) => el("p", "", p.replace(/\n/g, " "))));
    }
    help.hidden = !help.hidden;
    // (Its button takes the focus, for the keyboard, without scrolling the rules away.)
    if (!help.hidden) { help.scrollTop = 0; $("#help-close").focus({ preventScroll: true }); }
  }

  // The frames are counted only once asked (nertzStats.measure(): the tests that print the
  // frame rate): a callback at every frame keeps the page, left open, busy for nothing.
  let counting = false;
  function frame(t) {
    stats.frames += 1;
    if (stats.last !== undefined) stats.longest = Math.max(stats.longest, t - stats.last);
    stats.last = t;
    requestAnimationFrame(frame);
  }
  stats.measure = () => {
    Object.assign(stats, { frames: 0, longest: 0, start: performance.now(), last: undefined });
    if (!counting) requestAnimationFrame(frame);
    counting = true;
  };
  stats.fps = () => (1000 * stats.frames) / (performance.now() - stats.start);

  window.addEventListener("DOMContentLoaded", () => {
    document.addEventListener("pointerdown", onDownOffHelp, true);
    document.addEventListener("click", onClickOffHelp, true);
    document.addEventListener("pointerdown", onDown);
    document.addEventListener("pointermove", onMove);
    document.addEventListener("pointerup", onUp);
    document.addEventListener("pointercancel", () => { if (drag && drag.clone) snapBack(drag.clone, drag.origin); drag = null; });
    document.addEventListener("keydown", onKey);
    $("#contrast").onclick = () => document.body.classList.toggle("contrast");
    $("#help-button").onclick = toggleHelp;
    setUpLobby();
    for (const b of document.querySelectorAll("#replay button, #actions button[data-key]"))
      b.onclick = () => key(b.dataset.key);
    $("#learn").onclick = toggleHelp;
    $("#help-close").onclick = toggleHelp;
    $("#quit").onclick = () => key(/leave the game\?/.test(view ? view.status : "") ? "y" : "q");
    if (new URLSearchParams(location.search).has("contrast")) document.body.classList.add("contrast");
    window.addEventListener("online", tryNow);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) tryNow(); });
    connect();
  });
})();
