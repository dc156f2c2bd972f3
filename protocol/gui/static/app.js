// Pedina GUI: the page. The server keeps the game and the rules; this script draws the board
// in SVG, lets the person enter moves among the legal ones the server sent, and shows the
// clocks, the move list, the analysis and the evaluation graph.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const CELL = 100;            // board units per square (the board is 800 x 800)
  const GRAPH_LIMIT = 4;       // the evaluation graph is clipped at +-4 men
  // The graph's box (SVG units): the +-4 labels have the margin left of the plot to themselves,
  // where neither the cursor line nor a point can cover them.
  const GRAPH = {width: 400, height: 140, pad: 8, left: 26};
  const EVAL_BAR_SCALE = 150;  // hundredths of a man: a man ahead is about two thirds of the bar
  const MAX_PDN_BYTES = 2000000;  // the server's MAX_PDN

  const $ = (id) => document.getElementById(id);

  let socket = null;
  let state = null;            // the last "state" message
  let analysis = null;         // the last "analysis" message
  let review = null;           // the game review of the last "review" message (null: none)
  let engines = [];            // the engines of the command line
  let cores = 0;               // the cores the server's engines share (0: not told)
  let threadsChosen = {};      // the person's Threads for each engine (its index), both panels
  let flipped = false;
  let entry = null;            // a move being entered: {start, path: [landing squares so far]}
  // An engine line shown on the board instead of the game (null: the game): the position it is
  // about ({ply, position} of the state), its moves up to the one clicked, and their Hub texts.
  let preview = null;
  let holdLines = false;       // a pointer is down on the analysis lines: they are redrawn once it is up
  let flash = null;            // {square, until} a refused square, drawn red for a moment
  let drag = null;             // {square, x, y, moved, selectedNow}
  let clockBase = 0;           // performance.now() when the clocks in the state were read
  let setupPending = false;
  let resignAsked = false;     // Resign was clicked once: the next click confirms it
  // The game and the settings survive a reload in the browser's storage; the game comes back
  // as a loaded one (the engines do not play on). Until the server has it, nothing is stored.
  const GAME_KEY = "pedina-gui-game", SETTINGS_KEY = "pedina-gui-settings";
  let kept = stored(GAME_KEY);
  let editor = "W" + "e".repeat(32);

  // -- squares and geometry ---------------------------------------------------------

  // The row and column (from White's side, top left 0,0) of square 1..32 in FID numbering:
  // square 1 is a8, the top left corner, and 32 is h1, the bottom right one.
  function squareCell(square) {
    const row = Math.floor((square - 1) / 4);
    const column = 2 * ((square - 1) % 4) + (row % 2);
    return flipped ? [7 - row, 7 - column] : [row, column];
  }

  function cellSquare(row, column) {
    if (flipped) { row = 7 - row; column = 7 - column; }
    if (row < 0 || row > 7 || column < 0 || column > 7 || (row + column) % 2 === 1) return null;
    return row * 4 + Math.floor(column / 2) + 1;
  }

  function centre(square) {
    const [row, column] = squareCell(square);
    return [column * CELL + CELL / 2, row * CELL + CELL / 2];
  }

  function el(name, attributes, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  function isPromotion(square, white) {
    return white ? square <= 4 : square >= 29;
  }

  // The Hub position string after ``move`` (as the server sends moves) is played in ``position``.
  function playOn(position, move) {
    const letters = position.split("");
    let letter = letters[move.start];
    letters[move.start] = "e";
    for (const square of move.captured) letters[square] = "e";
    const end = move.path[move.path.length - 1];
    if (isPromotion(end, letter === "w")) letter = letter.toUpperCase();
    letters[end] = letter;
    letters[0] = letters[0] === "W" ? "B" : "W";
    return letters.join("");
  }

  // -- drawing the board -------------------------------------------------------------

  // A man or king at square ("w", "W", "b" or "B"), drawn at (x, y).
  function drawPiece(layer, letter, x, y, extraClass) {
    const colour = letter.toLowerCase();
    const group = el("g", {class: "piece" + (extraClass ? " " + extraClass : ""), "data-piece": letter,
                           transform: `translate(${x} ${y})`}, layer);
    el("circle", {r: 38, class: "body-" + colour}, group);
    el("circle", {r: 27, class: "ring-" + colour}, group);
    if (letter === "W" || letter === "B") {
      el("path", {d: "M -20 10 L -24 -12 L -11 -1 L 0 -18 L 11 -1 L 24 -12 L 20 10 Z", class: "crown-" + colour}, group);
    }
    return group;
  }

  // The squares, the numbers and the pieces of a Hub position string, with optional marks.
  function drawBoard(svg, position, marks) {
    svg.replaceChildren();
    const defs = el("defs", {}, svg);
    const marker = el("marker", {id: svg.id + "-head", viewBox: "0 0 10 10", refX: "5", refY: "5",
                                 markerWidth: "3", markerHeight: "3", orient: "auto-start-reverse"}, defs);
    el("path", {d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head"}, marker);
    const squares = el("g", {}, svg);
    for (let row = 0; row < 8; row++) {
      for (let column = 0; column < 8; column++) {
        const square = cellSquare(row, column);
        const attributes = {x: column * CELL, y: row * CELL, width: CELL, height: CELL};
        if (square === null) {
          el("rect", Object.assign(attributes, {class: "sq-light"}), squares);
          continue;
        }
        let kind = "sq-dark";
        if (marks.last && marks.last.has(square)) kind = "sq-last";
        if (marks.selected === square) kind = "sq-selected";
        if (marks.flash === square) kind = "sq-flash";
        el("rect", Object.assign(attributes, {class: kind, "data-square": square}), squares);
      }
    }
    const pieces = el("g", {}, svg);
    for (let square = 1; square <= 32; square++) {
      const letter = position[square];
      if (letter === "e" || (marks.hidden && marks.hidden.has(square))) continue;
      const [x, y] = centre(square);
      drawPiece(pieces, letter, x, y, marks.taken && marks.taken.has(square) ? "taken" : "");
    }
    if (marks.numbers) {  // in the corner the round pieces leave free, above them
      for (let square = 1; square <= 32; square++) {
        const [x, y] = centre(square);
        const text = el("text", {x: x - 46, y: y - 31, class: "sq-number"}, svg);
        text.textContent = String(square);
      }
    }
    for (const square of marks.targets || []) {
      const [x, y] = centre(square);
      el("circle", {cx: x, cy: y, r: 16, class: "target", "data-target": square}, svg);
    }
    if (marks.arrow) {
      const points = [marks.arrow.start, ...marks.arrow.path].map(centre);
      el("polyline", {points: points.map((p) => p.join(",")).join(" "), class: "arrow",
                      "marker-end": `url(#${svg.id}-head)`, "data-arrow": marks.arrow.hub}, svg);
    }
    if (marks.moving) {
      drawPiece(svg, marks.moving.letter, marks.moving.x, marks.moving.y, "ghost");
    }
  }

  function svgPoint(svg, event) {
    const point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  }

  function squareAtEvent(svg, event) {
    const point = svgPoint(svg, event);
    return cellSquare(Math.floor(point.y / CELL), Math.floor(point.x / CELL));
  }

  // -- moves being entered -------------------------------------------------------------

  function legal() { return state ? state.legal : []; }
  function endOf(move) { return move.path[move.path.length - 1]; }
  function sideLetter() { return state.white_to_move ? "w" : "b"; }
  function ownPieceAt(square) { return state.position[square].toLowerCase() === sideLetter(); }

  // The legal moves that go on from the squares entered so far.
  function candidates() {
    if (!entry) return [];
    return legal().filter((move) => move.start === entry.start &&
      entry.path.every((square, index) => move.path[index] === square));
  }

  function movesText(moves) {
    return moves.slice(0, 6).map((move) => move.text).join(", ") + (moves.length > 6 ? ", …" : "");
  }

  function refuse(square, text) {
    flash = {square: square, until: performance.now() + 600};
    say(text, true);
    render();
    setTimeout(render, 650);
  }

  function select(square) {
    const own = legal().filter((move) => move.start === square);
    if (own.length) {
      entry = {start: square, path: []};
      say("");
      render();
      return true;
    }
    const captures = legal().filter((move) => move.captured.length);
    if (state.position[square] === "e" || !ownPieceAt(square)) {
      refuse(square, `Choose one of ${state.white_to_move ? "White" : "Black"}'s pieces.`);
    } else if (captures.length) {
      refuse(square, `A capture is compulsory: ${movesText(captures)}.`);
    } else {
      refuse(square, "That piece cannot move.");
    }
    return false;
  }

  function play(move) {
    entry = null;
    say("");
    send({type: "move", start: move.start, path: move.path});
    // Shown at once; the server's state confirms it (or its error puts the board back).
    render({pending: move});
  }

  // A click (or the end of a drag) on a square.
  function clickSquare(square) {
    if (!state) return;
    if (!legal().length) {
      say(state.why_not ? `No move now: ${state.why_not}.` : "No move now.", true);
      return;
    }
    if (!entry) { select(square); return; }
    if (square === entry.start && entry.path.length === 0) { entry = null; render(); return; }
    const moves = candidates();
    const next = moves.filter((move) => move.path[entry.path.length] === square);
    if (next.length) {
      entry.path.push(square);
      const complete = next.filter((move) => move.path.length === entry.path.length);
      if (next.length === 1 && complete.length === 1) { play(complete[0]); return; }
      say(`Go on: ${[...new Set(next.map((move) => move.path[entry.path.length]))].join(" or ")}`);
      render();
      return;
    }
    const ending = moves.filter((move) => endOf(move) === square);
    if (ending.length === 1) { play(ending[0]); return; }
    if (ending.length > 1) {
      say(`${ending.length} captures end on ${square}: click the landing squares one by one.`, true);
      render();
      return;
    }
    if (entry.path.length === 0 && state.position[square] !== "e" && ownPieceAt(square)) {
      entry = null;
      select(square);
      return;
    }
    refuse(square, `Not a legal move: ${[entry.start, ...entry.path, square].join("-")}. ` +
      `The moves from here: ${movesText(moves)}.`);
  }

  // -- rendering -----------------------------------------------------------------------

  function say(text, isError) {
    const box = $("message");
    box.textContent = text;
    box.className = isError ? "error" : "";
  }

  function render(options) {
    if (!state) return;
    const pending = options && options.pending;
    const marks = {numbers: $("opt-numbers").checked, targets: [], last: null};
    let position = state.position;
    if (preview) {
      position = preview.moves.reduce(playOn, position);
      const shown = preview.moves[preview.moves.length - 1];
      marks.last = new Set([shown.start, ...shown.path]);
    } else if (pending) {
      position = playOn(position, pending);
      marks.last = new Set([pending.start, ...pending.path]);
    } else if (state.last) {
      marks.last = new Set([state.last.start, ...state.last.path]);
    }
    if (entry && !pending) {
      const moves = candidates();
      const done = entry.path.length;
      marks.selected = entry.start;
      marks.targets = [...new Set(moves.map((move) => move.path[done]).filter((square) => square))];
      if (done) {
        const letter = position[entry.start];
        const here = entry.path[done - 1];
        const crowned = isPromotion(here, letter === "w") ? letter.toUpperCase() : letter;
        const [x, y] = centre(here);
        marks.hidden = new Set([entry.start]);
        marks.taken = new Set(moves[0].captured.slice(0, done));
        marks.moving = {letter: crowned, x: x, y: y};
      }
    }
    if (drag && drag.moved && entry && !pending) {
      marks.hidden = new Set([entry.start]);
      const letter = position[entry.start];
      marks.moving = {letter: letter, x: drag.x, y: drag.y};
    }
    if (flash && performance.now() < flash.until) marks.flash = flash.square;
    const line = analysis && analysis.ply === state.cursor && analysis.lines.length ? analysis.lines[0] : null;
    if (line && line.pv.length && state.analysing && !entry && !preview) marks.arrow = line.pv[0];
    const marked = markAt(state.cursor);
    if (!marks.arrow && marked && marked.better.length && !entry && !pending && !preview) marks.arrow = marked.better[0];
    const board = $("board");
    drawBoard(board, position, marks);
    board.dataset.position = state.position;
    board.dataset.cursor = String(state.cursor);
    board.dataset.legal = String(state.legal.length);
    board.dataset.mode = state.mode;
    board.dataset.thinking = state.thinking || "";
    board.dataset.result = state.result ? state.result.result : "";
    board.dataset.entry = entry ? [entry.start, ...entry.path].join("-") : "";
    board.dataset.shown = position;
    board.dataset.preview = preview ? preview.key : "";
    board.classList.toggle("preview", Boolean(preview));
    renderPreview();
  }

  // The banner over the board while an engine line is shown: which move, and the way back.
  function renderPreview() {
    $("preview-banner").hidden = !preview;
    if (!preview) return;
    const texts = preview.moves.map((move) => move.text);
    const last = withNumbers(texts, preview.ply, state.start_fen[0] === "W")[texts.length - 1];
    $("preview-text").textContent = `Preview of the engine line after ${last.filter((word) => word).join(" ")} ` +
      "— Esc or click the board to go back";
    $("preview-play").hidden = state.mode !== "free";
  }

  function sideName(white) { return white ? "White" : "Black"; }

  function clockText(seconds) {
    const negative = seconds < 0;
    const left = Math.max(0, seconds);
    const minutes = Math.floor(left / 60);
    const rest = left - minutes * 60;
    const text = left < 10 ? `${minutes}:${rest.toFixed(1).padStart(4, "0")}` :
      `${minutes}:${String(Math.floor(rest)).padStart(2, "0")}`;
    return negative ? "0:00.0" : text;
  }

  function renderClocks() {
    if (!state) return;
    const clocks = state.clocks;
    const bottomWhite = !flipped;
    for (const [id, white] of [["player-bottom", bottomWhite], ["player-top", !bottomWhite]]) {
      const box = $(id).querySelector(".clock");
      if (!clocks) { box.textContent = ""; box.className = "clock"; continue; }
      const colour = white ? "white" : "black";
      let left = clocks[colour];
      const running = clocks.running === colour;
      if (running) left -= (performance.now() - clockBase) / 1000;
      box.textContent = clockText(left);
      box.className = "clock" + (running ? " running" : "") + (left < 10 ? " low" : "");
      box.dataset.seconds = left.toFixed(2);
    }
  }

  function renderPlayers() {
    const bottomWhite = !flipped;
    for (const [id, white] of [["player-bottom", bottomWhite], ["player-top", !bottomWhite]]) {
      const bar = $(id);
      bar.querySelector(".side").className = "side " + (white ? "white" : "black");
      const name = state.players[white ? "white" : "black"];
      const thinking = state.thinking === (white ? "white" : "black") ? " — thinking…" : "";
      bar.querySelector(".name").textContent = sideName(white) + (name && name !== "?" ? `: ${name}` : "") + thinking;
    }
  }

  function renderStatus() {
    const status = $("status");
    status.className = "";
    if (state.result) {
      status.className = "over";
      const winner = {"1-0": "White wins", "0-1": "Black wins", "1/2-1/2": "Draw"}[state.result.result] || "";
      status.textContent = `${state.result.result} · ${winner}: ${state.result.reason}`;
      return;
    }
    const side = sideName(state.white_to_move);
    if (state.mode === "play") {
      const atEnd = state.cursor === state.moves.length;
      if (state.thinking) status.textContent = `${state.players[state.thinking]} is thinking…`;
      else if (state.can.engine_move) status.textContent = "The engine failed: try it again, take back, or start a new game";
      else if (!atEnd) status.textContent = "An earlier position: go to the last one (End) to play";
      else if (state.white_to_move === (state.human === "white")) status.textContent = `Your move (${side})`;
      else status.textContent = `${side} to move (engine)`;
    } else if (state.mode === "watch") {
      status.textContent = `Engines playing · ${side} to move`;
    } else {
      status.textContent = `${side} to move`;
    }
  }

  function renderButtons() {
    const can = state.can;
    $("btn-takeback").disabled = !can.takeback;
    if (!can.resign) resignAsked = false;
    $("btn-resign").disabled = !can.resign;
    $("btn-resign").textContent = resignAsked ? "Confirm resign?" : "Resign";
    $("btn-resign").classList.toggle("confirm", resignAsked);
    $("btn-draw").disabled = !can.draw;
    $("btn-retry").hidden = !can.engine_move;
    $("btn-move-now").hidden = !(state.mode === "play" && state.thinking);
    $("btn-stop-watch").hidden = state.mode !== "watch";
    for (const id of ["btn-resign", "btn-draw"]) $(id).hidden = state.mode !== "play";
    $("btn-analyse").textContent = state.analysing ? "Stop" : "Analyse";
    $("btn-analyse").disabled = (state.mode === "play" && !state.result) || (!state.analysing && !!analysisRefusal());
    const failure = state.failure;
    $("failure").hidden = !failure || !failure.tail || !failure.tail.length;
    $("failure-tail").textContent = failure && failure.tail ? failure.tail.join("\n") : "";
  }

  function renderMoves() {
    const list = $("move-list");
    list.replaceChildren();
    const whiteFirst = state.start_fen[0] === "W";
    const moves = state.moves;
    const offset = whiteFirst ? 0 : 1;   // a game from a Black-to-move position starts with "1..."
    for (let index = 0; index < moves.length + offset; index += 2) {
      const number = document.createElement("div");
      number.className = "number";
      number.textContent = `${index / 2 + 1}.`;
      list.appendChild(number);
      for (const ply of [index - offset, index + 1 - offset]) {
        if (ply === index + 1 - offset && ply < moves.length && hasVariations(ply - 1)) {
          // The White move's variations broke the row: Black's move starts another, as "12. …".
          const again = document.createElement("div");
          again.className = "number";
          again.textContent = `${index / 2 + 1}.`;
          const gap = document.createElement("span");
          gap.textContent = "…";
          list.append(again, gap);
        }
        const cell = document.createElement(ply >= 0 && ply < moves.length ? "button" : "span");
        if (ply >= 0 && ply < moves.length) {
          cell.type = "button";
          cell.className = "mv" + (state.cursor === ply + 1 ? " current" : "");
          cell.textContent = moves[ply].text;
          cell.dataset.ply = String(ply + 1);
          const marked = markAt(ply);
          if (marked) {
            // The mark itself leads to the position before the move, where the better line is shown.
            const nag = document.createElement("span");
            nag.className = `nag nag-${marked.nag}`;
            nag.textContent = marked.mark;
            nag.title = `lost ${marked.loss.toFixed(2)} men: click for the better line`;
            nag.addEventListener("click", (event) => { event.stopPropagation(); goto(ply); });
            cell.appendChild(nag);
          }
          if (state.comments[ply]) cell.title = state.comments[ply];
          cell.addEventListener("click", () => goto(ply + 1));
        } else {
          cell.textContent = ply < 0 ? "…" : "";
        }
        list.appendChild(cell);
        if (hasVariations(ply)) {
          for (const text of state.variations[ply]) list.appendChild(variationLine(text));
        }
      }
    }
    if (state.result) {
      const result = document.createElement("div");
      result.className = "result";
      result.textContent = state.result.result;
      list.appendChild(result);
    }
    $("move-comment").textContent = state.cursor ? state.comments[state.cursor - 1] : "";
    const current = list.querySelector(".current");
    if (current) current.scrollIntoView({block: "nearest"});
  }

  function hasVariations(ply) {
    return ply >= 0 && Boolean(state.variations && state.variations[ply] && state.variations[ply].length);
  }

  // A variation (the line played instead of a move, as PDN writes it: "(12... 10-14 {comment}
  // 22-18)") on a row of its own under that move, its comments set apart from its moves.
  function variationLine(text) {
    const line = document.createElement("div");
    line.className = "variation";
    for (const part of text.split(/(\{[^}]*\})/)) {
      if (!part) continue;
      const span = document.createElement("span");
      const comment = part.startsWith("{");
      span.className = comment ? "comment" : "line";
      span.textContent = comment ? part.slice(1, -1) : part;
      line.appendChild(span);
    }
    return line;
  }

  // The server words every score (pedina.scores): a number, or who wins and how it is known.
  function scoreText(score) {
    return score ? score.text : "";
  }

  function renderGraph() {
    const svg = $("graph");
    svg.replaceChildren();
    const evals = state.evals;
    const {width, height, pad} = GRAPH;
    const count = Math.max(evals.length - 1, 1);
    const x = (ply) => GRAPH.left + (width - GRAPH.left - pad) * ply / count;
    const y = (score) => {
      const men = score.result ? score.result * GRAPH_LIMIT : score.white / 100;
      const clipped = Math.max(-GRAPH_LIMIT, Math.min(GRAPH_LIMIT, men));
      return height / 2 - (height / 2 - pad) * clipped / GRAPH_LIMIT;
    };
    el("line", {x1: GRAPH.left - 4, x2: width, y1: height / 2, y2: height / 2, class: "graph-zero"}, svg);
    const known = evals.map((score, ply) => [ply, score]).filter(([, score]) => score);
    if (known.length) {
      const points = known.map(([ply, score]) => `${x(ply).toFixed(1)},${y(score).toFixed(1)}`);
      const first = x(known[0][0]).toFixed(1), last = x(known[known.length - 1][0]).toFixed(1);
      el("polygon", {points: `${first},${height / 2} ${points.join(" ")} ${last},${height / 2}`, class: "graph-area"}, svg);
      el("polyline", {points: points.join(" "), class: "graph-line"}, svg);
      for (const [ply, score] of known) {
        const dot = el("circle", {cx: x(ply), cy: y(score), r: 3, class: "graph-point", "data-ply": ply}, svg);
        const title = el("title", {}, dot);
        title.textContent = `position ${ply}: ${scoreText(score)}`;
      }
    }
    for (const marked of review ? review.marks : []) {
      const score = evals[marked.ply + 1];
      if (!score) continue;
      const dot = el("circle", {cx: x(marked.ply + 1), cy: y(score), r: 4.5, class: `graph-mark-${marked.nag}`,
                                "data-mark": marked.ply}, svg);
      el("title", {}, dot).textContent = `${marked.mark} lost ${marked.loss.toFixed(2)} men`;
    }
    el("line", {x1: x(state.cursor), x2: x(state.cursor), y1: 0, y2: height, class: "graph-cursor"}, svg);
    const top = el("text", {x: 3, y: pad + 4, class: "graph-label"}, svg);
    top.textContent = `+${GRAPH_LIMIT}`;
    const bottom = el("text", {x: 3, y: height - pad + 4, class: "graph-label"}, svg);
    bottom.textContent = `−${GRAPH_LIMIT}`;
    svg.dataset.points = String(known.length);
  }

  // White's share of the evaluation bar for a score (White's view): a proven win fills it, and a
  // man ahead gives about two thirds, as a player would rate the chances.
  function whiteShare(score) {
    if (!score) return 0.5;
    if (score.result) return score.result > 0 ? 1 : 0;
    return 1 / (1 + Math.exp(-score.white / EVAL_BAR_SCALE));
  }

  function renderEvalBar() {
    const score = state.evals[state.cursor] || null;
    const share = whiteShare(score);
    const bar = $("eval-bar");
    bar.classList.toggle("flipped", flipped);
    bar.dataset.known = score ? "1" : "0";
    bar.dataset.white = (100 * share).toFixed(1);
    bar.title = score ? `${scoreText(score)} (White's view)` : "No score for this position yet";
    $("eval-white").style.height = `${(100 * share).toFixed(1)}%`;
  }

  function renderAnalysis() {
    if (holdLines) return;  // a click on a line's move is under way: its button must stay
    const list = $("analysis-lines-list");
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.focus : null;
    list.replaceChildren();
    const stats = $("analysis-stats");
    if (!analysis || (!analysis.running && !analysis.lines.length)) { stats.textContent = ""; return; }
    const parts = [];
    if (analysis.engine) parts.push(analysis.engine);
    if (analysis.stats.depth) parts.push(`depth ${analysis.stats.depth}`);
    if (analysis.stats.nodes) parts.push(`${Number(analysis.stats.nodes).toLocaleString("en")} nodes`);
    if (analysis.stats.nps) parts.push(`${Number(analysis.stats.nps).toFixed(2)} M nodes/s`);
    parts.push(analysis.running ? "running" : "stopped");
    stats.textContent = parts.join(" · ");
    stats.dataset.running = analysis.running ? "1" : "0";
    const position = state.moves.length >= analysis.ply ? analysis.ply : 0;
    const whiteFirst = state.start_fen[0] === "W";
    const about = {ply: analysis.ply, position: state.position};  // the position the lines are about
    analysis.lines.forEach((line, number) => {
      const item = document.createElement("li");
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = scoreText(line.score);
      const depth = document.createElement("span");
      depth.className = "depth";
      depth.textContent = line.depth ? `d${line.depth}` : "";
      // Each move a button: a click shows the line up to it on the board (see showPreview).
      const moves = document.createElement("span");
      moves.className = "pv";
      withNumbers(line.pv.map((move) => move.text), position, whiteFirst).forEach(([label, text], index) => {
        if (label) moves.append(label, " ");
        const button = lineButton(`m${number}-${index}`, text, "Show the position after this move (Esc: back to the game)",
                                  () => showPreview(line.pv.slice(0, index + 1)));
        button.className = "pv-move" + (preview && preview.key === lineKey(line.pv.slice(0, index + 1)) ? " current" : "");
        button.dataset.hub = line.pv[index].hub;
        moves.append(button, " ");
      });
      const play = lineButton(`p${number}`, "Play", "Play this line into the game",
                              () => playLine(about.ply, about.position, line.pv));
      play.className = "play-line";
      play.hidden = state.mode !== "free" || !line.pv.length;
      item.append(score, " ", depth, " ", moves, play);
      list.appendChild(item);
    });
    const again = focused && list.querySelector(`[data-focus="${focused}"]`);
    if (again) again.focus();  // the lines are redrawn at every report: the keyboard keeps its place
  }

  function lineButton(focus, text, title, action) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.title = title;
    button.dataset.focus = focus;
    button.addEventListener("click", action);
    return button;
  }

  function lineKey(moves) { return moves.map((move) => move.hub).join(" "); }

  // Show ``moves`` (an engine line of the position shown, up to a move) on the board; the game is untouched.
  function showPreview(moves) {
    entry = null;
    preview = {ply: state.cursor, position: state.position, moves: moves, key: lineKey(moves)};
    say("");
    render();
    renderAnalysis();
    // On a phone the lines are below the board: the board comes into view to show the line.
    const shown = $("board").getBoundingClientRect();
    if (shown.top < 0 || shown.bottom > window.innerHeight) $("preview-banner").scrollIntoView({block: "start"});
  }

  function leavePreview() {
    preview = null;
    render();
    renderAnalysis();
  }

  // Play ``moves`` of an engine line into the game from position ``ply`` (the server refuses it if
  // that is no longer the position shown, or the game is against an engine).
  function playLine(ply, position, moves) {
    entry = null;
    preview = null;
    send({type: "play_line", ply: ply, position: position, moves: moves.map((move) => move.hub)});
    render();
  }

  // Move texts played from position ``ply`` (0 = the start), each with its move number ("" if none).
  function withNumbers(texts, ply, whiteFirst) {
    return texts.map((text, index) => {
      const half = ply + index + (whiteFirst ? 0 : 1);
      const label = half % 2 === 0 ? `${half / 2 + 1}.` : index === 0 ? `${(half - 1) / 2 + 1}…` : "";
      return [label, text];
    });
  }

  // Move texts played from position ``ply`` (0 = the start), with move numbers.
  function numbered(texts, ply, whiteFirst) {
    return withNumbers(texts, ply, whiteFirst).flat().filter((word) => word).join(" ");
  }

  // The mark of the move played from position ``ply`` in the review shown, or null.
  function markAt(ply) {
    return review ? review.marks.find((marked) => marked.ply === ply) || null : null;
  }

  function moveLabel(ply) {
    return numbered([state.moves[ply].text], ply, state.start_fen[0] === "W").replace(/ .*/, "");
  }

  function renderReview() {
    const running = Boolean(review && review.running);
    $("btn-review").textContent = running ? "Stop the review" : "Review the game";
    $("btn-review").disabled = !running && ((state.mode === "play" && !state.result) || state.mode === "watch" ||
                                            !state.moves.length || !!analysisRefusal());
    $("btn-review-pdn").disabled = !review || !review.done;
    $("review-progress-row").hidden = !review;
    $("review-summary").hidden = !review;
    const panel = $("review-panel");
    panel.dataset.running = running ? "1" : "0";
    panel.dataset.done = review ? String(review.done) : "";
    const list = $("review-marks");
    list.replaceChildren();
    $("review-better").textContent = "";
    if (!review) return;
    $("review-progress").max = review.total;
    $("review-progress").value = review.done;
    const finished = review.done === review.total ? "done" : running ? "reviewing…" : "stopped";
    $("review-status").textContent = `${review.engine}, ${review.strength}: ${review.done}/${review.total} positions, ` +
      finished + (review.problem ? ` (${review.problem})` : "");
    const body = $("review-summary").querySelector("tbody");
    body.replaceChildren();
    for (const side of ["white", "black"]) {
      const row = document.createElement("tr");
      const sum = review.summary[side];
      const name = state.players[side];
      row.dataset.side = side;
      for (const text of [sideName(side === "white") + (name && name !== "?" ? ` (${name})` : ""), sum.inaccuracies,
                          sum.mistakes, sum.blunders, `${sum.average_loss.toFixed(2)} men`]) {
        const cell = document.createElement("td");
        cell.textContent = String(text);
        row.appendChild(cell);
      }
      body.appendChild(row);
    }
    const whiteFirst = state.start_fen[0] === "W";
    for (const marked of review.marks) {
      if (marked.ply >= state.moves.length) continue;
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.mark = String(marked.ply);
      button.className = marked.ply === state.cursor ? "current" : "";
      button.textContent = `${moveLabel(marked.ply)} ${state.moves[marked.ply].text}${marked.mark}`;
      button.title = `lost ${marked.loss.toFixed(2)} men: show the position with the better line`;
      button.addEventListener("click", () => goto(marked.ply));
      item.appendChild(button);
      list.appendChild(item);
    }
    const marked = markAt(state.cursor);
    if (marked && marked.ply < state.moves.length) {
      $("review-better").textContent = `${moveLabel(marked.ply)} ${state.moves[marked.ply].text}${marked.mark} ` +
        `lost ${marked.loss.toFixed(2)} men. Better: ${numbered(marked.better.map((move) => move.text), marked.ply, whiteFirst)}` +
        (marked.better_score ? ` (${scoreText(marked.better_score)})` : "");
    }
  }

  function renderEngines() {
    for (const id of ["analysis-engine", "new-engine", "watch-white", "watch-black"]) {
      const select = $(id);
      const chosen = select.value;
      select.replaceChildren();
      for (const engine of engines) {
        const option = document.createElement("option");
        option.value = String(engine.index);
        option.textContent = engine.name + (engine.problem ? " (cannot start)" : "");
        option.title = engine.problem || engine.id_name || engine.name;
        select.appendChild(option);
      }
      if (chosen) select.value = chosen;
      else if (select.dataset.kept && engines.some((engine) => String(engine.index) === select.dataset.kept)) {
        select.value = select.dataset.kept;
      }
    }
    if ($("watch-black").value === "0" && engines.length > 1 && !$("watch-black").dataset.touched) $("watch-black").value = "1";
    renderSkill();
  }

  function renderSkill() {
    const engine = engines[Number($("new-engine").value)] || null;
    const skill = engine && engine.params.skill;
    $("new-skill-label").hidden = !skill;
    if (skill) {
      const range = $("new-skill");
      range.min = skill.min || "0";
      range.max = skill.max || "20";
      if (!range.dataset.touched) range.value = engine.options.skill || skill.value || range.max;
      $("new-skill-value").textContent = range.value;
    }
    const analyser = engines[Number($("analysis-engine").value)];
    $("analysis-lines").disabled = !(analyser && analyser.params.multipv);
    $("new-tables-label").hidden = !(engine && engine.params["egdb-path"]);
    $("analysis-tables-label").hidden = !(analyser && analyser.params["egdb-path"]);
    renderThreads("new", $("new-engine").value);
    renderThreads("analysis", $("analysis-engine").value);
    $("new-engine-id").textContent = identity(engine);
    $("analysis-engine-id").textContent = identity(analyser);
    // A DXP engine only plays: the page says so at once rather than asking the server.
    const refusal = analysisRefusal();
    $("analysis-note").hidden = !refusal;
    $("analysis-note").textContent = refusal || "";
    if (state) { renderButtons(); renderReview(); }
  }

  // The Threads choice "PREFIX-threads" for the engine of index ``index``: shown when the engine
  // declares ``threads``, from its minimum to its maximum or the server's cores, whichever is fewer
  // (more processes than cores only take turns); the person's choice for that engine where it fits,
  // else the engine's own value: its command line's, else its default.
  function renderThreads(prefix, index) {
    const engine = engines[Number(index)];
    const declared = engine && engine.params.threads;
    $(`${prefix}-threads-label`).hidden = !declared;
    if (!declared) return;
    const select = $(`${prefix}-threads`);
    const own = Number(engine.options.threads || declared.value) || 1;
    const low = Number(declared.min) || 1;
    const high = Math.max(own, Math.min(Number(declared.max) || own, cores || Infinity));
    select.replaceChildren();
    for (let count = low; count <= high; count++) {
      const option = document.createElement("option");
      option.value = option.textContent = String(count);
      select.appendChild(option);
    }
    const chosen = Number(threadsChosen[index]);
    select.value = String(chosen >= low && chosen <= high ? chosen : own);
  }

  // ``message`` with the Threads choice "PREFIX-threads" when it is shown.
  function withThreads(message, prefix) {
    if (!$(`${prefix}-threads-label`).hidden) message.threads = Number($(`${prefix}-threads`).value);
    return message;
  }

  // What an engine says it is, once it has been started: "Pedina 0.2.0 by The Pedina developers".
  function identity(engine) {
    if (!engine || !engine.id_name) return "";
    const version = engine.id_version ? ` ${engine.id_version}` : "";
    return `${engine.id_name}${version}${engine.id_author ? ` by ${engine.id_author}` : ""}`;
  }

  // The ``analyse`` message for the page's analysis settings.
  function analyseMessage(on) {
    const message = {type: "analyse", on: on, engine: Number($("analysis-engine").value),
                     lines: Number($("analysis-lines").value)};
    if (!$("analysis-tables-label").hidden) message.tables = $("analysis-tables").checked;
    return withThreads(message, "analysis");
  }

  // Why the analysis engine chosen cannot analyse ("" when it can).
  function analysisRefusal() {
    const analyser = engines[Number($("analysis-engine").value)];
    return (analyser && analyser.no_analysis) || "";
  }

  function renderAll() {
    if (!state) return;
    render();
    renderPlayers();
    renderClocks();
    renderStatus();
    renderButtons();
    renderMoves();
    renderGraph();
    renderEvalBar();
    renderAnalysis();
    renderReview();
    $("fen").textContent = state.fen;
  }

  // -- talking to the server -------------------------------------------------------------

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      say("Not connected to the server: reload the page.", true);
      return;
    }
    socket.send(JSON.stringify(message));
  }

  function goto(ply) {
    if (!state) return;
    entry = null;
    preview = null;
    send({type: "goto", ply: Math.max(0, Math.min(state.moves.length, ply))});
  }

  function stored(key) {
    try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (error) { return null; }
  }

  function store(key, value) {
    try { localStorage.setItem(key, JSON.stringify(value)); } catch (error) { /* full or refused: not kept */ }
  }

  function keepGame() {
    const players = {White: state.players.white, Black: state.players.black};
    store(GAME_KEY, {start: state.start_fen, moves: state.moves.map((move) => move.hub), cursor: state.cursor,
                     headers: Object.assign({}, state.headers, players), comments: state.comments,
                     variations: state.variations,
                     result: state.result ? state.result.result : "*",
                     reason: state.result ? state.result.reason : ""});
  }

  function keepSettings() {
    store(SETTINGS_KEY, {flipped: flipped, numbers: $("opt-numbers").checked,
                         engine: $("analysis-engine").value, lines: $("analysis-lines").value,
                         tables: $("analysis-tables").checked,
                         threads: threadsChosen});
  }

  function restoreSettings() {
    const settings = stored(SETTINGS_KEY);
    if (!settings) return;
    flipped = Boolean(settings.flipped);
    $("opt-numbers").checked = Boolean(settings.numbers);
    if (settings.lines) $("analysis-lines").value = settings.lines;
    if (settings.tables === false) $("analysis-tables").checked = false;
    if (settings.threads && typeof settings.threads === "object") threadsChosen = settings.threads;
    if (settings.engine) $("analysis-engine").dataset.kept = settings.engine;
  }

  // Ask the server for the kept game, if there is one worth having (more than the fresh game ``fresh``).
  function restoreGame(fresh) {
    const game = kept;
    if (!game || !Array.isArray(game.moves) || (!game.moves.length && game.start === fresh.start_fen)) {
      kept = null;
      return;
    }
    send({type: "restore", start: game.start, moves: game.moves, headers: game.headers || {},
          comments: game.comments || [], variations: game.variations || [], result: game.result || "*",
          reason: game.reason || ""});
    send({type: "goto", ply: Math.min(Number(game.cursor) || 0, game.moves.length)});
  }

  function gameKey(shown) { return `${shown.game}/${shown.moves.length}`; }

  // The game's long lists come as changes to the list of the previous message that carried it
  // (protocol/gui/outbox.py): keep its first entries, replace some, append the rest.
  const CHANGED_LISTS = ["moves", "comments", "variations", "evals"];
  let lists = {};              // each such list as the connection has sent it so far

  function applyChanges(message) {
    for (const key of CHANGED_LISTS) {
      const changes = message[key];
      if (!changes) continue;
      const list = (lists[key] || []).slice(0, changes.keep);
      for (const [index, value] of changes.set) list[index] = value;
      message[key] = lists[key] = list.concat(changes.add);
    }
  }

  function receive(message) {
    applyChanges(message);
    switch (message.type) {
      case "welcome":
        engines = message.engines;
        cores = message.cores || 0;
        renderEngines();
        break;
      case "engines":
        engines = message.engines;
        renderEngines();
        break;
      case "state":
        // A message is about the game as it was: another game, or a move more or less, ends it.
        if (state && gameKey(state) !== gameKey(message)) say("");
        // The fresh game of the connection comes first; the kept one (a new game number) next.
        if (kept && !state) restoreGame(message);
        state = message;
        if (kept && state.game > 0) { kept = null; say("The game was restored after the reload."); }
        if (!kept) keepGame();
        clockBase = performance.now();
        if (entry && !state.legal.some((move) => move.start === entry.start)) entry = null;
        if (analysis && analysis.ply !== state.cursor) analysis = null;
        if (preview && (!analysis || preview.ply !== state.cursor || preview.position !== state.position)) preview = null;
        if (setupPending) { setupPending = false; $("dlg-setup").close(); }
        renderAll();
        break;
      case "analysis":
        analysis = message;
        if (state) { state.evals = message.evals; renderGraph(); renderEvalBar(); render(); }
        renderAnalysis();
        break;
      case "review":
        review = message.review;
        if (state && message.game === state.game) { state.evals = message.evals; renderAll(); }
        break;
      case "error":
        kept = null;  // a kept game the server refused is dropped
        if (setupPending) {
          setupPending = false;
          $("setup-error").textContent = message.message;
        }
        say(message.message, true);
        render();
        break;
      case "notice":
        say(message.message);
        break;
      case "pdn":
        download(message.text, message.annotated ? "-review" : "");
        say(message.annotated ? "The reviewed game saved as annotated PDN." : "Game saved as PDN.");
        break;
      case "pdn_games":
        choosePdnGame(message.games);
        break;
      default:
        break;
    }
  }

  function connect() {
    const token = new URLSearchParams(location.search).get("token") || "";
    socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
    lists = {};
    socket.addEventListener("open", () => {
      $("connection").textContent = "connected";
      $("connection").className = "connection";
    });
    socket.addEventListener("message", (event) => {
      try { receive(JSON.parse(event.data)); } catch (error) { say(`Bad message from the server: ${error}`, true); }
    });
    socket.addEventListener("close", () => {
      $("connection").textContent = "disconnected: reload the page";
      $("connection").className = "connection down";
    });
  }

  // -- files ---------------------------------------------------------------------------

  function base64(bytes) {
    const chunks = [];
    for (let at = 0; at < bytes.length; at += 0x8000) {
      chunks.push(String.fromCharCode.apply(null, bytes.subarray(at, at + 0x8000)));
    }
    return btoa(chunks.join(""));
  }

  function download(text, suffix) {
    const blob = new Blob([text], {type: "application/x-pdn"});
    const link = document.createElement("a");
    const players = state ? `${state.players.white}-${state.players.black}`.replace(/[^A-Za-z0-9_-]+/g, "_") : "game";
    link.download = `pedina-${players}${suffix}.pdn`;
    link.href = URL.createObjectURL(blob);
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  function choosePdnGame(games) {
    const select = $("pdn-games");
    select.replaceChildren();
    games.forEach((label, index) => {
      const option = document.createElement("option");
      option.value = String(index);
      option.textContent = label;
      select.appendChild(option);
    });
    select.value = "0";
    $("dlg-pdn").showModal();
  }

  // -- dialogs ---------------------------------------------------------------------------

  function radio(name) {
    const checked = document.querySelector(`input[name="${name}"]:checked`);
    return checked ? checked.value : null;
  }

  function timeOf(prefix) {
    if (radio(`${prefix}-time-kind`) === "clock") {
      return {kind: "clock", minutes: Number($(`${prefix}-time-minutes`).value),
              increment: Number($(`${prefix}-time-increment`).value)};
    }
    return {kind: "move", seconds: Number($(`${prefix}-time-seconds`).value)};
  }

  function startNewGame() {
    const mode = radio("new-mode");
    const message = {type: "new_game", mode: mode, from_current: $("new-from-current").checked};
    if (mode === "play") {
      message.engine = Number($("new-engine").value);
      message.colour = $("new-colour").value;
      message.time = timeOf("new");
      if (!$("new-skill-label").hidden) message.skill = Number($("new-skill").value);
      if (!$("new-tables-label").hidden) message.tables = $("new-tables").checked;
      withThreads(message, "new");
      flipped = message.colour === "black";
      keepSettings();
    }
    entry = null;
    analysis = null;
    send(message);
    $("dlg-new").close();
  }

  function startWatch() {
    entry = null;
    analysis = null;
    send({type: "watch", white: Number($("watch-white").value), black: Number($("watch-black").value),
          time: timeOf("watch")});
    $("dlg-watch").close();
  }

  function editorFen() {
    const white = [], black = [];
    for (let square = 1; square <= 32; square++) {
      const letter = editor[square];
      if (letter === "w" || letter === "W") white.push((letter === "W" ? "K" : "") + square);
      if (letter === "b" || letter === "B") black.push((letter === "B" ? "K" : "") + square);
    }
    return `${editor[0]}:W${white.join(",")}:B${black.join(",")}`;
  }

  function renderEditor() {
    drawBoard($("editor-board"), editor, {numbers: true});
    $("editor-board").dataset.position = editor;
    $("editor-fen").textContent = `FEN ${editorFen()}`;
  }

  function setEditor(position) {
    editor = position;
    const turn = document.querySelector(`input[name="editor-turn"][value="${position[0]}"]`);
    if (turn) turn.checked = true;
    renderEditor();
  }

  function openSetup() {
    $("setup-error").textContent = "";
    $("setup-text").value = state ? state.fen : "";
    setEditor(state ? state.position : "W" + "e".repeat(32));
    $("dlg-setup").showModal();
  }

  function submitSetup(text) {
    $("setup-error").textContent = "";
    setupPending = true;
    entry = null;
    analysis = null;
    send({type: "setup", position: text});
  }

  // -- events ----------------------------------------------------------------------------

  function wire() {
    const board = $("board");
    board.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || !state) return;
      if (preview) { leavePreview(); return; }  // a click on the line shown goes back to the game
      const square = squareAtEvent(board, event);
      if (square === null) return;
      let selectedNow = false;
      if ((!entry || entry.path.length === 0) && state.legal.some((move) => move.start === square) &&
          (!entry || entry.start !== square)) {
        entry = {start: square, path: []};
        say("");
        selectedNow = true;
        render();
      }
      drag = {square: square, x: 0, y: 0, moved: false, selectedNow: selectedNow};
      board.setPointerCapture(event.pointerId);
    });
    board.addEventListener("pointermove", (event) => {
      if (!drag || !entry || entry.path.length) return;
      const point = svgPoint(board, event);
      drag.x = point.x;
      drag.y = point.y;
      const square = squareAtEvent(board, event);
      if (square !== drag.square) drag.moved = true;
      if (drag.moved) render();
    });
    board.addEventListener("pointerup", (event) => {
      if (!drag) return;
      const started = drag;
      drag = null;
      const square = squareAtEvent(board, event);
      if (square === null) { render(); return; }
      if (square !== started.square) { clickSquare(square); render(); return; }
      if (!started.selectedNow) clickSquare(square);
    });
    board.addEventListener("pointercancel", () => { drag = null; render(); });

    $("btn-flip").addEventListener("click", () => { flipped = !flipped; keepSettings(); renderAll(); });
    $("opt-numbers").addEventListener("change", () => { keepSettings(); render(); });
    window.addEventListener("beforeunload", (event) => {
      if (state && !state.result && (state.mode === "play" || state.mode === "watch")) {
        event.preventDefault();
        event.returnValue = "";  // a game against the clock or the engines is running: ask first
      }
    });
    $("btn-takeback").addEventListener("click", () => { entry = null; send({type: "takeback"}); });
    $("btn-resign").addEventListener("click", () => {
      if (resignAsked) send({type: "resign"});
      resignAsked = !resignAsked;
      renderButtons();
    });
    // A click anywhere else, or Escape, takes the question back.
    document.addEventListener("click", (event) => {
      if (resignAsked && event.target !== $("btn-resign")) { resignAsked = false; renderButtons(); }
    }, true);
    $("btn-draw").addEventListener("click", () => send({type: "draw"}));
    $("btn-retry").addEventListener("click", () => send({type: "engine_move"}));
    $("btn-move-now").addEventListener("click", () => send({type: "stop"}));
    $("btn-stop-watch").addEventListener("click", () => send({type: "stop"}));
    $("btn-analyse").addEventListener("click", () => send(analyseMessage(!(state && state.analysing))));
    // The person's Threads are the engine's they were chosen for: another engine shows its own, and
    // they stay as chosen when the options are drawn again (engines come and go).
    for (const prefix of ["new", "analysis"]) {
      $(`${prefix}-threads`).addEventListener("change", () => {
        threadsChosen[$(`${prefix}-engine`).value] = $(`${prefix}-threads`).value;
        keepSettings();
      });
    }
    for (const id of ["analysis-engine", "analysis-lines", "analysis-tables", "analysis-threads"]) {
      $(id).addEventListener("change", () => {
        keepSettings();
        renderSkill();
        if (state && state.analysing) send(analyseMessage(true));
      });
    }
    // While a pointer is down on the lines they stay as they are, so that its click reaches the move
    // pressed; once it is up (the click comes after pointerup), or has left them, they catch up.
    const releaseLines = () => { if (holdLines) { holdLines = false; setTimeout(renderAnalysis); } };
    $("analysis-lines-list").addEventListener("pointerdown", () => { holdLines = true; });
    $("analysis-lines-list").addEventListener("pointerleave", releaseLines);
    for (const kind of ["pointerup", "pointercancel"]) document.addEventListener(kind, releaseLines);
    $("preview-back").addEventListener("click", leavePreview);
    $("preview-play").addEventListener("click", () => preview && playLine(preview.ply, preview.position, preview.moves));
    $("nav-first").addEventListener("click", () => goto(0));
    $("nav-back").addEventListener("click", () => state && goto(state.cursor - 1));
    $("nav-forward").addEventListener("click", () => state && goto(state.cursor + 1));
    $("nav-last").addEventListener("click", () => state && goto(state.moves.length));
    document.addEventListener("keydown", (event) => {
      if (!state || document.querySelector("dialog[open]")) return;
      const tag = event.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      const keys = {ArrowLeft: state.cursor - 1, ArrowRight: state.cursor + 1, Home: 0, End: state.moves.length};
      if (event.key in keys) { event.preventDefault(); goto(keys[event.key]); }
      if (event.key === "Escape" && entry) { entry = null; render(); }
      if (event.key === "Escape" && preview) leavePreview();
      if (event.key === "Escape" && resignAsked) { resignAsked = false; renderButtons(); }
    });
    $("graph").addEventListener("click", (event) => {
      if (!state) return;
      const point = svgPoint($("graph"), event);
      const count = Math.max(state.evals.length - 1, 1);
      goto(Math.round((point.x - GRAPH.left) / (GRAPH.width - GRAPH.left - GRAPH.pad) * count));
    });

    $("btn-new").addEventListener("click", () => { renderSkill(); $("dlg-new").showModal(); });
    $("new-start").addEventListener("click", startNewGame);
    $("new-cancel").addEventListener("click", () => $("dlg-new").close());
    $("new-engine").addEventListener("change", renderSkill);
    $("new-skill").addEventListener("input", () => {
      $("new-skill").dataset.touched = "1";
      $("new-skill-value").textContent = $("new-skill").value;
    });
    for (const input of document.querySelectorAll('input[name="new-mode"]')) {
      input.addEventListener("change", () => { $("new-play-settings").hidden = radio("new-mode") !== "play"; });
    }
    $("btn-watch").addEventListener("click", () => $("dlg-watch").showModal());
    $("watch-black").addEventListener("change", () => { $("watch-black").dataset.touched = "1"; });
    $("watch-start").addEventListener("click", startWatch);
    $("watch-cancel").addEventListener("click", () => $("dlg-watch").close());

    $("btn-setup").addEventListener("click", openSetup);
    $("setup-paste").addEventListener("click", () => submitSetup($("setup-text").value));
    $("setup-text").addEventListener("keydown", (event) => { if (event.key === "Enter") submitSetup($("setup-text").value); });
    $("setup-done").addEventListener("click", () => submitSetup(editor));
    $("setup-cancel").addEventListener("click", () => { setupPending = false; $("dlg-setup").close(); });
    $("editor-clear").addEventListener("click", () => setEditor(editor[0] + "e".repeat(32)));
    $("editor-start").addEventListener("click", () => setEditor("Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww"));
    $("editor-current").addEventListener("click", () => setEditor(state ? state.position : editor));
    for (const input of document.querySelectorAll('input[name="editor-turn"]')) {
      input.addEventListener("change", () => { editor = radio("editor-turn") + editor.slice(1); renderEditor(); });
    }
    $("editor-board").addEventListener("click", (event) => {
      const square = squareAtEvent($("editor-board"), event);
      if (square === null) return;
      const piece = radio("editor-piece");
      const letters = editor.split("");
      letters[square] = letters[square] === piece ? "e" : piece;
      editor = letters.join("");
      renderEditor();
    });

    $("btn-load").addEventListener("click", () => $("file-pdn").click());
    $("file-pdn").addEventListener("change", () => {
      const file = $("file-pdn").files[0];
      $("file-pdn").value = "";
      if (!file) return;
      if (file.size > MAX_PDN_BYTES) { say(`${file.name} is too large for a PDN file (${file.size} bytes).`, true); return; }
      // The bytes go to the server, which decodes them as the command line does (Windows-1252 too).
      file.arrayBuffer().then((buffer) => {
        entry = null;
        analysis = null;
        send({type: "load_pdn", data: base64(new Uint8Array(buffer))});
      }, (error) => say(`Cannot read ${file.name}: ${error}`, true));
    });
    $("pdn-load").addEventListener("click", () => {
      send({type: "pick_pdn", index: Number($("pdn-games").value)});
      $("dlg-pdn").close();
    });
    $("pdn-cancel").addEventListener("click", () => $("dlg-pdn").close());
    $("btn-save").addEventListener("click", () => send({type: "save_pdn"}));
    $("btn-review").addEventListener("click", () => {
      if (review && review.running) { send({type: "stop"}); return; }
      const [kind, value] = $("review-strength").value.split(":");
      const message = withThreads({type: "review", engine: Number($("analysis-engine").value)}, "analysis");
      message[kind] = Number(value);
      analysis = null;
      send(message);
    });
    $("btn-review-pdn").addEventListener("click", () => send({type: "review_pdn"}));

    setInterval(renderClocks, 100);
  }

  restoreSettings();
  wire();
  connect();
})();
