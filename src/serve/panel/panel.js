// The recall memory panel. Plain DOM code, no framework and no build step.
// Every string from the server is set with textContent, never as HTML.
"use strict";

const $ = (sel) => document.querySelector(sel);
let token = sessionStorage.getItem("recall-token") || "";
let tokenRefused = false; // the last answer was 401: its message is shown
let current = null; // {kind: "project", id, name} or {kind: "user"}
let rows = []; // the scope's memories as last loaded, archived ones too

const CATEGORIES = ["decisions", "procedures", "principles", "incidents", "preferences"];

function base() {
  return current.kind === "user"
    ? "/api/user/memories"
    : `/api/projects/${encodeURIComponent(current.id)}/memories`;
}

function say(text, isError) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

// Call the API; returns `data` or throws an Error with a message for people.
async function api(method, path, body) {
  const headers = {};
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let resp;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (_) {
    // fetch rejects only when no answer came at all.
    throw new Error("the server is not running: start it with `recall serve`, then reload this page");
  }
  let env = null;
  try {
    env = await resp.json();
  } catch (_) {
    throw new Error(`the server answered ${resp.status} without JSON`);
  }
  if (resp.status === 401) {
    tokenRefused = true;
    askToken();
  } else if (tokenRefused) {
    // The token works now: its error is no longer true.
    tokenRefused = false;
    say("");
  }
  if (!env.success) throw new Error(env.error || `request failed (${resp.status})`);
  return env.data;
}

function askToken() {
  const d = $("#token-dialog");
  if (!d.open) d.showModal();
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

// Text as nodes: what sits between a pair of backticks (Markdown's inline
// code) becomes a <code> element, a lone backtick stays as typed, and the
// characters `highlights` covers ([start, end) in code points, as the JSON
// output gives them: see docs/output.md) are wrapped in <mark>. Never
// parsed as HTML.
function richText(text, highlights) {
  const chars = Array.from(String(text));
  const marked = chars.map(() => false);
  for (const [a, b] of highlights || []) {
    for (let i = a; i < b && i < chars.length; i++) marked[i] = true;
  }
  const ticks = [];
  chars.forEach((c, i) => { if (c === "`") ticks.push(i); });
  if (ticks.length % 2) ticks.pop();
  const tick = new Set(ticks);
  const code = chars.map(() => false);
  for (let k = 0; k < ticks.length; k += 2) {
    for (let i = ticks[k] + 1; i < ticks[k + 1]; i++) code[i] = true;
  }
  // Runs of code or text, each split into marked and unmarked runs, so one
  // code span holds its marks.
  const out = [];
  let i = 0;
  while (i < chars.length) {
    if (tick.has(i)) {
      i++;
      continue;
    }
    const inCode = code[i];
    const parts = [];
    while (i < chars.length && !tick.has(i) && code[i] === inCode) {
      const m = marked[i];
      let run = "";
      while (i < chars.length && !tick.has(i) && code[i] === inCode && marked[i] === m) run += chars[i++];
      parts.push(m ? el("mark", { text: run }) : document.createTextNode(run));
    }
    out.push(...(inCode ? [el("code", {}, ...parts)] : parts));
  }
  return out;
}

function scopeLabel(p) {
  // A project whose index cannot be read has no count (`error` says why).
  return p.records == null ? `${p.name} (index unreadable)` : `${p.name} (${p.records})`;
}

async function loadScopes() {
  const sel = $("#scope");
  for (const o of [...sel.options]) if (o.value !== "user") o.remove();
  let projects;
  try {
    projects = await api("GET", "/api/projects");
  } catch (e) {
    // Nothing is chosen on a refusal (a token to enter, a server down):
    // choosing would write a scope into the URL, and the answer given once
    // the token is in would open that instead of what was asked for.
    say(`Could not list projects: ${e.message}`, true);
    return;
  }
  for (const p of projects) {
    const o = el("option", { value: `project:${p.id}`, text: scopeLabel(p) });
    o.dataset.name = p.name;
    sel.insertBefore(o, sel.firstChild);
  }
  // The URL's project or scope; else the folder `recall serve` runs in;
  // else the only project; else ask. `?scope=user` is what choosing your
  // memory writes, so a reload opens it again, not the folder's project.
  const params = new URLSearchParams(location.search);
  const wanted = params.get("project");
  const mine = !wanted && params.get("scope") === "user";
  const match = !mine && (projects.find((p) => p.id === wanted || p.name === wanted)
    || (!wanted && projects.find((p) => p.current))
    || (!wanted && projects.length === 1 && projects[0]));
  if (match) sel.value = `project:${match.id}`;
  else if (mine || !projects.length) sel.value = "user";
  else {
    const ask = el("option", { value: "", text: "choose a project…", disabled: "" });
    sel.insertBefore(ask, sel.firstChild);
    sel.value = "";
    say(wanted
      ? `No project called ${wanted}: choose one above.`
      : "Choose a project above, or your own memory.");
    return;
  }
  await choose();
}

function choose() {
  const sel = $("#scope");
  const v = sel.value;
  if (!v) return;
  for (const o of [...sel.options]) if (!o.value) o.remove();
  if (v === "user") {
    current = { kind: "user" };
  } else {
    const id = v.slice("project:".length);
    current = { kind: "project", id, name: sel.selectedOptions[0].dataset.name };
  }
  // The URL says what is shown, so a reload or a shared link opens it.
  const url = new URL(location.href);
  // The id, not the name: two folders may hold projects of one name.
  url.search = current.kind === "user"
    ? "?scope=user"
    : `?project=${encodeURIComponent(current.id)}`;
  history.replaceState(null, "", url);
  say("");
  $("#hits").replaceChildren();
  $("#q-label").textContent = current.kind === "user"
    ? "Search your memory (all projects)"
    : `Search the memory of ${current.name} (and yours)`;
  resetCreate();
  return loadEntries();
}

async function loadEntries() {
  try {
    rows = await api("GET", base());
  } catch (e) {
    say(e.message, true);
    return;
  }
  showEntries();
}

// Archived memories are hidden unless asked for, and then listed after
// the active ones, each with a Restore button. The source and category
// filters narrow the list.
function showEntries() {
  const source = $("#filter-source").value;
  const category = $("#filter-category").value;
  const wanted = (m) => (!source || m.source === source) && (!category || m.category === category);
  const archived = rows.filter((m) => m.status === "archived");
  const active = rows.filter((m) => m.status !== "archived");
  const showArchived = $("#show-archived").checked;
  $("#count").textContent = archived.length
    ? `(${active.length}, ${archived.length} archived)`
    : `(${active.length})`;
  const opt = $("#scope").selectedOptions[0];
  if (opt && opt.value.startsWith("project:")) {
    opt.textContent = scopeLabel({ name: opt.dataset.name, records: active.length });
  }
  const shown = (showArchived ? active.concat(archived) : active).filter(wanted);
  const list = $("#entries");
  list.replaceChildren(...shown.map(entry));
  if (!shown.length) {
    let text = "No memories yet: add one below.";
    if (rows.length && (source || category)) text = "No memory matches these filters.";
    else if (archived.length) text = "No active memories: add one below, or show the archived ones.";
    list.append(el("li", { class: "empty", text }));
  }
}

function day(ts) {
  return (ts || "").slice(0, 10);
}

function entry(m) {
  const editable = m.source === "manual";
  const li = el("li", {
    class: `entry${m.pinned ? " pinned" : ""}${m.status === "archived" ? " archived" : ""}`,
    "data-id": m.id, "data-key": m.key,
  });
  const head = el("div", { class: "head" },
    el("span", { class: `badge ${m.source}`, text: m.source }),
    m.pinned ? el("span", { class: "badge pin", text: "pinned" }) : null,
    m.status === "archived" ? el("span", { class: "badge archived", text: "archived" }) : null,
    el("code", { class: "key", text: m.key }),
  );
  const value = el("div", { class: "value" }, ...richText(m.value));
  const meta = el("div", { class: "meta",
    text: `${m.category} · importance ${m.importance} · updated ${day(m.updated)}${m.host ? ` · from ${m.host}` : ""}` });
  const actions = el("div", { class: "actions" });
  const pin = el("button", {
    class: "secondary pin", type: "button", "aria-pressed": String(m.pinned),
    "aria-label": `${m.pinned ? "Unpin" : "Pin"} ${m.key}`, text: m.pinned ? "Unpin" : "Pin",
    onclick: () => act(li, () => api("PATCH", `${base()}/${encodeURIComponent(m.id)}/pin`, { pinned: !m.pinned }),
      `${m.pinned ? "Unpinned" : "Pinned"} ${m.key}`),
  });
  actions.append(pin);
  // Archive keeps the file and leaves the memory out of recall, as
  // `recall record archive` and MCP's `forget` do; Restore undoes it.
  if (m.status === "archived") {
    actions.append(el("button", {
      class: "secondary restore", type: "button", "aria-label": `Restore ${m.key}`, text: "Restore",
      onclick: () => act(li, () => api("PATCH", `${base()}/${encodeURIComponent(m.id)}`, { status: "active" }),
        `Restored ${m.key}`),
    }));
  } else {
    actions.append(el("button", {
      class: "secondary archive", type: "button", "aria-label": `Archive ${m.key}`, text: "Archive",
      onclick: () => act(li, () => api("PATCH", `${base()}/${encodeURIComponent(m.id)}`, { status: "archived" }),
        `Archived ${m.key}: it is left out of recall; Show archived lists it, and Restore brings it back`),
    }));
  }
  actions.append(el("button", {
    class: "secondary edit", type: "button", "aria-label": `Edit ${m.key}`, text: "Edit",
    onclick: () => edit(li, value, meta, m, editable),
  }));
  // A memory filed in the wrong scope moves, as `recall record move` does:
  // a project's to your own memory, yours to a project you choose.
  if (current.kind === "project") {
    actions.append(el("button", {
      class: "secondary move", type: "button", "aria-label": `Move ${m.key} to your memory`,
      text: "Move to my memory",
      onclick: () => act(li, () => api("POST", `${base()}/${encodeURIComponent(m.id)}/move`, { to: "user" }),
        `Moved ${m.key} to your memory (all projects): choose "your memory" above to see it`),
    }));
  } else if (projectOptions().length) {
    const move = el("button", {
      class: "secondary move", type: "button", "aria-label": `Move ${m.key} to a project`,
      text: "Move to a project…",
      onclick: () => chooseProject(li, actions, move, m),
    });
    actions.append(move);
  }
  const del = el("button", {
    class: "secondary delete", type: "button", "aria-label": `Delete ${m.key}`, text: "Delete",
    onclick: () => confirmDelete(li, actions, del, m),
  });
  actions.append(del);
  const note = editable ? null : el("div", { class: "readonly", text: `${m.source}-captured · its text is read-only` });
  const error = el("p", { class: "row-error", role: "alert", hidden: "" });
  li.append(...[head, value, meta, note, error, actions].filter(Boolean));
  return li;
}

// An error shown in the row it is about; `null` clears it.
function rowError(li, text) {
  const e = li.querySelector(".row-error");
  e.textContent = text || "";
  e.hidden = !text;
}

// The projects the scope chooser lists: [{id, name}].
function projectOptions() {
  return [...$("#scope").options]
    .filter((o) => o.value.startsWith("project:"))
    .map((o) => ({ id: o.value.slice("project:".length), name: o.dataset.name }));
}

// Moving one of your memories: which project, then Move or Keep.
function chooseProject(li, actions, move, m) {
  move.hidden = true;
  const pick = el("select", { class: "move-to", "aria-label": `Project to move ${m.key} to` },
    ...projectOptions().map((p) => el("option", { value: p.id, text: p.name })));
  const yes = el("button", {
    class: "confirm-move", type: "button", "aria-label": `Move ${m.key} to the chosen project`, text: "Move",
    onclick: () => {
      const target = pick.selectedOptions[0];
      act(li, () => api("POST", `${base()}/${encodeURIComponent(m.id)}/move`, { to: "project", project: target.value }),
        `Moved ${m.key} to ${target.textContent}: choose it above to see it`);
    },
  });
  const no = el("button", {
    class: "secondary cancel", type: "button", text: "Keep",
    onclick: () => { pick.remove(); yes.remove(); no.remove(); move.hidden = false; move.focus(); },
  });
  actions.append(pick, yes, no);
  pick.focus();
}

function confirmDelete(li, actions, del, m) {
  del.hidden = true;
  const yes = el("button", {
    class: "danger confirm-delete", type: "button", "aria-label": `Really delete ${m.key}`, text: "Really delete",
    onclick: () => act(li, () => api("DELETE", `${base()}/${encodeURIComponent(m.id)}`), `Deleted ${m.key}`),
  });
  const no = el("button", {
    class: "secondary cancel", type: "button", text: "Keep",
    onclick: () => { yes.remove(); no.remove(); del.hidden = false; del.focus(); },
  });
  actions.append(yes, no);
  yes.focus();
}

// Edit in place: the value (a person's memory only), category and
// importance. A generated memory's text stays shown whole, as text, above
// the category and importance. Save sends only what changed; Esc or Cancel
// puts the row back; a failed save keeps what was typed and says why in
// the row.
function edit(li, value, meta, m, editable) {
  const area = editable ? el("textarea", { "aria-label": `New value of ${m.key}` }) : null;
  if (area) area.value = m.value;
  const cat = el("select", { "aria-label": `Category of ${m.key}`, class: "edit-category" },
    ...CATEGORIES.map((c) => el("option", { value: c, text: c })));
  cat.value = m.category;
  const imp = el("input", {
    "aria-label": `Importance of ${m.key}`, class: "edit-importance", type: "number", min: "0", max: "100",
  });
  imp.value = m.importance;
  const cancel = () => loadEntries();
  const save = el("button", {
    class: "save", type: "button", text: "Save",
    onclick: async () => {
      const change = {};
      if (area && area.value !== m.value) change.value = area.value;
      if (cat.value !== m.category) change.category = cat.value;
      // An emptied importance box changes nothing (Number("") is 0).
      if (imp.value.trim() !== "" && Number(imp.value) !== m.importance) {
        change.importance = Number(imp.value);
      }
      try {
        await api("PATCH", `${base()}/${encodeURIComponent(m.id)}`, change);
      } catch (e) {
        rowError(li, e.message);
        return;
      }
      say(`Saved ${m.key}`);
      await loadEntries();
    },
  });
  const controls = el("div", { class: "head" },
    el("label", {}, "Category ", cat), el("label", {}, "Importance ", imp),
    save, el("button", { class: "secondary cancel-edit", type: "button", text: "Cancel", onclick: cancel }));
  const box = el("div", { class: "value editing" }, area || el("div", {}, ...richText(m.value)), controls);
  box.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") {
      ev.preventDefault();
      cancel();
    }
  });
  value.replaceWith(box);
  meta.hidden = true;
  // The box fits the text it holds, up to most of the window.
  if (area) area.style.height = `${Math.min(area.scrollHeight + 4, window.innerHeight * 0.7)}px`;
  (area || cat).focus();
}

// Run a change to one row, then reload the list and say what happened; a
// failure is shown in the row and changes nothing on screen.
async function act(li, change, done) {
  try {
    await change();
  } catch (e) {
    rowError(li, e.message);
    return;
  }
  say(done);
  await loadEntries();
}

// A note under the add row: an error, or a warning before an overwrite.
function createNote(text) {
  const n = $("#create-note");
  n.textContent = text || "";
  n.hidden = !text;
}

// The add row asks before it replaces a memory that has the same key: the
// first Add says what would be overwritten, and Replace overwrites it.
function resetCreate() {
  const form = $("#create-form");
  delete form.dataset.replace;
  form.querySelector("button[type=submit]").textContent = "Add";
  createNote("");
}

async function create(ev) {
  ev.preventDefault();
  const form = $("#create-form");
  const body = {
    key: $("#new-key").value.trim(),
    value: $("#new-value").value,
    importance: Number($("#new-importance").value || 50),
  };
  const cat = $("#new-category").value;
  if (cat) body.category = cat;
  const existing = rows.find((m) => m.key === body.key);
  if (existing && form.dataset.replace !== body.key) {
    form.dataset.replace = body.key;
    form.querySelector("button[type=submit]").textContent = "Replace";
    const state = existing.status === "archived" ? "an archived" : "a";
    createNote(`There is already ${state} memory with the key ${body.key}: "${existing.value}" `
      + `(${existing.category}). Press Replace to overwrite its value, or change the key.`);
    return;
  }
  try {
    const m = await api("POST", base(), body);
    // Replacing an archived memory brings it back: what was typed is meant
    // to be used.
    if (existing && existing.status === "archived") {
      await api("PATCH", `${base()}/${encodeURIComponent(m.id)}`, { status: "active" });
    }
    say(`Saved ${m.key}`);
    form.reset();
    resetCreate();
    $("#new-key").focus();
  } catch (e) {
    createNote(e.message);
    return;
  }
  await loadEntries();
}

async function search(ev) {
  ev.preventDefault();
  const q = $("#q").value.trim();
  const out = $("#hits");
  if (!q || !current) return;
  const path = current.kind === "user"
    ? "/api/user/recall"
    : `/api/projects/${encodeURIComponent(current.id)}/recall`;
  try {
    const r = await api("GET", `${path}?format=json&limit=8&q=${encodeURIComponent(q)}`);
    out.replaceChildren(...r.hits.map((h) => el("li", {},
      el("strong", { text: h.title || h.id }),
      el("div", { class: "snippet" }, ...richText(h.snippet, h.highlights)),
      el("div", { class: "src", text: `${h.kind} · ${h.scope} · score ${h.score.toFixed(2)} · ${source(h)}` }),
      staleNote(h, r.hits))));
    if (!r.hits.length) out.append(el("li", { text: "No memory matched." }));
  } catch (e) {
    say(e.message, true);
  }
}

// A record a newer one in the same answer updates (`stale_by`, see
// docs/output.md) says so under it.
function staleNote(h, hits) {
  if (!h.stale_by) return null;
  const newer = hits.find((n) => n.id === h.stale_by);
  const name = newer ? newer.title || newer.id : h.stale_by;
  return el("div", { class: "stale", text: `possibly stale: the newer ${name} says otherwise` });
}

function source(h) {
  const s = h.source || {};
  const from = s.host ? ` · from ${s.host}` : "";
  if (s.session_id) return `session ${s.session_id}${from}`;
  if (s.ticket_id) return `ticket ${s.ticket_id}${from}`;
  return (s.path || h.id) + from;
}

document.addEventListener("DOMContentLoaded", () => {
  $("#scope").addEventListener("change", choose);
  $("#create-form").addEventListener("submit", create);
  $("#new-key").addEventListener("input", resetCreate);
  $("#show-archived").addEventListener("change", showEntries);
  $("#filter-source").addEventListener("change", showEntries);
  $("#filter-category").addEventListener("change", showEntries);
  $("#search-form").addEventListener("submit", search);
  $("#token-form").addEventListener("submit", () => {
    token = $("#token").value.trim();
    sessionStorage.setItem("recall-token", token);
    loadScopes();
  });
  loadScopes();
});
