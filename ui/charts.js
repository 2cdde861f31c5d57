// Charts as inline SVG, drawn from plain numbers: bars (spend per month, with a budget line) and
// a line (a live rate). No library: a chart is a few rects, a polyline and text.

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 220;
const PAD = { left: 56, right: 16, top: 16, bottom: 40 };

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function frame(label) {
  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'chart',
    role: 'img',
    'aria-label': label,
  });
  root.append(svg('title', {}, label));
  return root;
}

// The y scale for values up to `max` (at least 1e-9, so an all-zero chart still draws).
function scale(max) {
  const top = max > 0 ? max * 1.1 : 1;
  const inner = HEIGHT - PAD.top - PAD.bottom;
  return (v) => PAD.top + inner - (v / top) * inner;
}

function axis(root, y, max, format) {
  for (const f of [0, 0.5, 1]) {
    const v = max * f;
    const at = y(v);
    root.append(svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: at, y2: at, class: 'grid' }));
    root.append(svg('text', { x: PAD.left - 6, y: at + 4, 'text-anchor': 'end', class: 'tick' }, format(v)));
  }
}

// bars: [{label, value, tick?}] (tick: the axis text, the label when absent; '' for none), budget: a number or null (drawn as a dashed line), format: v => text.
export function barChart(label, bars, budget, format) {
  const root = frame(label);
  const max = Math.max(budget || 0, ...bars.map((b) => b.value), 0);
  const y = scale(max);
  axis(root, y, max > 0 ? max * 1.1 : 1, format);
  const inner = WIDTH - PAD.left - PAD.right;
  const step = inner / Math.max(bars.length, 1);
  bars.forEach((bar, i) => {
    const x = PAD.left + i * step + step * 0.15;
    const top = y(bar.value);
    const rect = svg('rect', {
      x, y: top, width: step * 0.7, height: Math.max(y(0) - top, 0), class: 'bar',
    });
    rect.append(svg('title', {}, `${bar.label}: ${format(bar.value)}`));
    root.append(rect);
    const tick = bar.tick === undefined ? bar.label : bar.tick;
    if (tick) root.append(svg('text', { x: x + step * 0.35, y: HEIGHT - PAD.bottom + 16, 'text-anchor': 'middle', class: 'tick' }, tick));
  });
  if (budget !== null && budget !== undefined) {
    const at = y(budget);
    root.append(svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: at, y2: at, class: 'budget' }));
    root.append(svg('text', { x: WIDTH - PAD.right, y: at - 4, 'text-anchor': 'end', class: 'budget-label' }, `budget ${format(budget)}`));
  }
  return root;
}

// points: numbers, oldest first, one per sample.
export function lineChart(label, points, format) {
  const root = frame(label);
  const max = Math.max(...points, 0);
  const y = scale(max);
  axis(root, y, max > 0 ? max * 1.1 : 1, format);
  const inner = WIDTH - PAD.left - PAD.right;
  const step = points.length > 1 ? inner / (points.length - 1) : 0;
  const coords = points.map((v, i) => `${PAD.left + i * step},${y(v)}`).join(' ');
  root.append(svg('polyline', { points: coords, class: 'line' }));
  return root;
}
