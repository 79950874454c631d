// Parapet's web page: chat with the agent, watch tool calls and shield
// verdicts, approve or deny escalated actions. Plain DOM, no framework.
// Everything shown comes from the model, tools or the shield and is
// untrusted: it is only ever set with textContent, never as HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const state = { session: '', busy: false, approvals: new Map() };

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

// Enum names without their prefixes: VERDICT_DECISION_ALLOW -> ALLOW.
const short = (s) => String(s || '').replace(/^(PIPELINE_EVENT_TYPE|VERDICT_DECISION|SESSION_MODE)_/, '');

function post(path, body) {
  const init = { method: 'POST', credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return fetch(path, init);
}

async function getJSON(path) {
  const res = await fetch(path, { credentials: 'same-origin' });
  const body = await res.json();
  if (!res.ok) throw new Error(errorText(body, res));
  return body;
}

function errorText(body, res) {
  return body && body.error ? body.error.code + ': ' + body.error.message : res.status + ' ' + res.statusText;
}

// Server-sent events read from a fetch response (EventSource cannot POST).
async function* readEvents(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { name, ev: JSON.parse(data.join('\n')) };
    }
  }
}

// ---- chat ----

function bubble(role, text) {
  const b = el('div', 'bubble ' + role, text);
  $('chat').append(b);
  b.scrollIntoView({ block: 'end' });
  return b;
}

function bubbleError(b, text) {
  b.append(el('span', 'error', text));
}

function setSession(id, title) {
  state.session = id;
  $('chat-title').textContent = id ? (title || id) : 'New session';
  $('otr').disabled = !!id;
  for (const li of $('sessions').children) li.classList.toggle('current', li.dataset.session === id);
}

async function send(text) {
  state.busy = true;
  $('send').disabled = true;
  bubble('user', text);
  const answer = bubble('assistant', '');
  answer.classList.add('streaming');
  const body = { content: text };
  if (!state.session && $('otr').checked) body.mode = 'otr';
  let res;
  try {
    res = await post('/api/sessions/' + encodeURIComponent(state.session || 'new') + '/messages', body);
    if (!res.ok) {
      bubbleError(answer, errorText(await res.json().catch(() => null), res));
      return;
    }
    const sid = res.headers.get('X-Parapet-Session-Id');
    if (sid && sid !== state.session) setSession(sid);
    let toolSince = false; // a tool call came between two bursts of text
    for await (const { name, ev } of readEvents(res)) {
      if (name === 'LLM_TOKEN') {
        answer.textContent += (toolSince && answer.textContent ? '\n' : '') + ev.llm_token.text;
        toolSince = false;
      } else if (name === 'ACTIONS_PLANNED') {
        toolSince = true;
      } else if (name === 'APPROVAL_NEEDED') {
        addApproval(ev);
      } else if (name === 'RESPONSE_COMPLETE') {
        answer.textContent = ev.response_complete.content;
        answer.dataset.done = 'complete';
      } else if (name === 'ERROR') {
        bubbleError(answer, ev.pipeline_error.code + ': ' + ev.pipeline_error.message);
        answer.dataset.done = 'error';
      }
    }
  } catch (e) {
    bubbleError(answer, String(e));
  } finally {
    dropApprovalsOf(res && res.headers.get('X-Parapet-Message-Id'));
    answer.classList.remove('streaming');
    if (!answer.dataset.done) answer.dataset.done = 'error';
    state.busy = false;
    $('send').disabled = false;
    loadSessions();
    loadStatus();
  }
}

// ---- approvals ----

function verdictLine(v) {
  const p = el('p', 'verdict');
  const decision = short(v.decision);
  p.append(el('span', decision, decision), ' tier ' + (v.tier || 0));
  if (v.rule_ids && v.rule_ids.length) p.append(' · ' + v.rule_ids.join(', '));
  if (v.reasoning) p.append(el('br'), v.reasoning);
  return p;
}

function addApproval(ev) {
  const a = ev.approval_needed;
  if (state.approvals.has(a.approval_id)) return;
  $('approvals').querySelector('.empty')?.remove();
  const card = el('div', 'approval');
  card.dataset.approvalId = a.approval_id;
  card.dataset.message = ev.message_id || '';
  card.append(el('strong', '', a.tool_name || 'action'), ' needs your decision');
  if (a.context_summary) card.append(el('p', '', a.context_summary));
  card.append(el('pre', '', prettyJSON(a.action ? a.action.payload_json : '')));
  if (a.shield_assessment) card.append(verdictLine(a.shield_assessment));
  const deadline = el('p', 'deadline');
  deadline.dataset.at = String(Number(a.timeout_at) * 1000);
  card.append(deadline);
  const buttons = el('div', 'buttons');
  const approve = el('button', 'approve', 'Approve');
  const deny = el('button', 'deny', 'Deny');
  approve.type = deny.type = 'button';
  approve.onclick = () => decide(card, a.approval_id, ev.session_id, true);
  deny.onclick = () => decide(card, a.approval_id, ev.session_id, false);
  buttons.append(approve, deny);
  card.append(buttons, el('p', 'outcome'));
  state.approvals.set(a.approval_id, card);
  $('approvals').append(card);
  tickDeadlines();
}

async function decide(card, id, sessionID, approved) {
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  const outcome = card.querySelector('.outcome');
  outcome.textContent = approved ? 'approving…' : 'denying…';
  try {
    const res = await post('/api/approvals/' + encodeURIComponent(id), { approved, session_id: sessionID });
    if (res.ok) {
      outcome.textContent = approved ? 'approved' : 'denied';
    } else {
      outcome.textContent = res.status === 404 ? 'already answered or expired' : errorText(await res.json().catch(() => null), res);
    }
  } catch (e) {
    outcome.textContent = String(e);
  }
}

function dropApproval(id) {
  const card = state.approvals.get(id);
  if (!card) return;
  state.approvals.delete(id);
  card.remove();
  if (!state.approvals.size) $('approvals').append(el('p', 'empty', 'Nothing waits for you.'));
}

// A finished turn has nothing left waiting, even if a resolution was missed.
function dropApprovalsOf(messageID) {
  for (const [id, card] of state.approvals) {
    if (messageID && card.dataset.message === messageID) dropApproval(id);
  }
}

function tickDeadlines() {
  const now = Date.now();
  for (const card of state.approvals.values()) {
    const d = card.querySelector('.deadline');
    const left = Math.round((Number(d.dataset.at) - now) / 1000);
    const at = new Date(Number(d.dataset.at)).toLocaleTimeString();
    d.textContent = left > 0 ? 'denied automatically at ' + at + ' (in ' + left + ' s)' : 'deadline passed: denied';
  }
}

function prettyJSON(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s || ''; }
}

// ---- activity: every session's tool calls and verdicts ----

function activity(ev, ...parts) {
  const li = el('li');
  li.dataset.type = short(ev.event_type);
  li.dataset.session = ev.session_id || '';
  li.append(...parts);
  $('activity').prepend(li);
  while ($('activity').children.length > 200) $('activity').lastChild.remove();
  return li;
}

const handlers = {
  SHIELD_VERDICT(ev) {
    const sv = ev.shield_verdict;
    const li = activity(ev, el('strong', '', sv.tool_name), ': ', verdictLine(sv.verdict || {}));
    li.dataset.call = sv.call_id;
    li.dataset.decision = short((sv.verdict || {}).decision);
  },
  ACTION_STARTED(ev) {
    const as = ev.action_started;
    activity(ev, el('strong', '', as.tool_name), ' started', el('pre', '', prettyJSON(as.arguments_json))).dataset.call = as.call_id;
  },
  ACTION_COMPLETED(ev) {
    const ac = ev.action_completed;
    const r = ac.result || {};
    const li = activity(ev, el('strong', '', ac.tool_name), r.success ? ' succeeded' : ' failed or did not run',
      el('pre', '', (r.error || r.output || '').slice(0, 2000)));
    li.dataset.call = ac.call_id;
    li.dataset.success = String(!!r.success);
  },
  APPROVAL_NEEDED(ev) {
    addApproval(ev);
    activity(ev, el('strong', '', ev.approval_needed.tool_name), ' waits for approval');
  },
  APPROVAL_RESOLVED(ev) {
    const r = ev.approval_resolved;
    dropApproval(r.approval_id);
    activity(ev, 'approval ' + r.outcome + (r.resolved_by ? ' by ' + r.resolved_by : '')).dataset.outcome = r.outcome;
  },
  OTR_BLOCKED(ev) {
    activity(ev, el('strong', '', ev.otr_blocked.tool_name), ' refused (off the record): ' + ev.otr_blocked.reason);
  },
  ERROR(ev) {
    dropApprovalsOf(ev.message_id);
    activity(ev, 'error ' + ev.pipeline_error.code + ': ' + ev.pipeline_error.message);
  },
  RESPONSE_COMPLETE(ev) {
    dropApprovalsOf(ev.message_id);
    if (!state.busy) loadSessions();
  },
};

function watch() {
  const es = new EventSource('/api/events');
  es.onopen = () => {
    document.body.dataset.events = 'open';
    loadStatus();
    loadSessions();
  };
  es.onerror = () => {
    document.body.dataset.events = 'closed';
    $('status').textContent = 'engine unreachable; retrying…';
  };
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (m) => fn(JSON.parse(m.data)));
  }
}

// ---- sessions and status ----

async function loadSessions() {
  try {
    const list = await getJSON('/api/sessions?limit=50');
    const ul = $('sessions');
    ul.replaceChildren();
    for (const s of list.sessions) {
      const li = el('li');
      li.dataset.session = s.id;
      li.classList.toggle('current', s.id === state.session);
      const b = el('button', '', s.title || s.id);
      b.type = 'button';
      b.append(el('small', '', (short(s.mode) === 'OTR' ? 'off the record · ' : '') + s.message_count + ' messages'));
      b.onclick = () => openSession(s.id, s.title);
      li.append(b);
      ul.append(li);
    }
  } catch (e) {
    $('status').textContent = 'sessions: ' + e.message;
  }
}

async function openSession(id, title) {
  if (state.busy) return;
  const h = await getJSON('/api/sessions/' + encodeURIComponent(id) + '/history');
  $('chat').replaceChildren();
  for (const m of h.messages) bubble(m.role, m.content);
  setSession(id, title);
}

async function loadStatus() {
  try {
    const s = await getJSON('/api/status');
    const parts = [s.agent_connected ? 'agent ' + (s.agent_name || '') + ' connected' : 'no agent connected'];
    if (s.sandbox_status) parts.push('sandbox: ' + s.sandbox_status);
    parts.push('shield: ' + s.shield_mode);
    if (s.model || s.provider) parts.push('model: ' + [s.provider, s.model].filter(Boolean).join(' '));
    parts.push(s.workspace);
    $('status').textContent = parts.join(' · ');
    document.body.dataset.agent = s.agent_connected ? 'connected' : 'none';
  } catch (e) {
    $('status').textContent = 'status: ' + e.message;
  }
}

async function restart() {
  if (!confirm('Restart the engine? The process manager starts it again; this page then needs the new address (agentctl status).')) return;
  const res = await post('/api/restart');
  $('status').textContent = res.ok ? 'restarting…' : 'restart refused: ' + errorText(await res.json().catch(() => null), res);
}

// ---- wiring ----

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('message').value.trim();
  if (!text || state.busy) return;
  $('message').value = '';
  send(text);
});
$('message').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && e.ctrlKey) $('composer').requestSubmit();
});
$('new-session').onclick = () => {
  if (state.busy) return;
  $('chat').replaceChildren();
  setSession('');
};
$('restart').onclick = restart;
setInterval(tickDeadlines, 1000);
setInterval(loadStatus, 15000);
watch();
