// Building the pages: elements, tables, forms, notices and formatting. No framework: h() makes
// an element, and a page replaces what it rendered by rendering again.

// h('a', {href: '/ui'}, 'text', child...): an element; attributes starting with "on" are
// listeners; null, undefined and false children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

// Replaces what `el` shows.
export function show(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A table: columns are [heading, row => cell content].
export function table(columns, rows, empty = 'Nothing yet.') {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    null,
    h('thead', null, h('tr', null, columns.map(([name]) => h('th', null, name)))),
    h('tbody', null, rows.map((row) => h('tr', null, columns.map(([, cell]) => h('td', null, cell(row)))))),
  );
}

// A labelled input.
export function field(label, attrs) {
  return h('label', null, h('span', null, label), h('input', attrs));
}

// A form whose submit (Enter or its button) calls `onsubmit(values)`; an error it throws is
// shown under the form.
export function form(title, fields, button, onsubmit) {
  const status = h('p', { class: 'status', role: 'status' });
  const el = h('form', { class: 'card' }, title ? h('h3', null, title) : null, fields,
    h('button', { type: 'submit' }, button), status);
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(el).entries());
    show(status);
    try {
      await onsubmit(values, status);
    } catch (error) {
      show(status, h('span', { class: 'error' }, error.message));
    }
  });
  return el;
}

export function notice(text, kind = 'muted') {
  return h('p', { class: kind }, text);
}

export function usd(value) {
  if (value === null || value === undefined) return '—';
  return `$${Number(value).toFixed(value !== 0 && Math.abs(value) < 0.01 ? 6 : 2)}`;
}

export function time(ms) {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function unixTime(seconds) {
  return seconds ? time(seconds * 1000) : '—';
}

export function number(value, digits = 0) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return Number(value).toFixed(digits);
}

// "2026-12": this month (UTC), and the `count` months before it, oldest first.
export function months(count) {
  const now = new Date();
  const out = [];
  for (let i = count - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    out.push(d.toISOString().slice(0, 7));
  }
  return out;
}
