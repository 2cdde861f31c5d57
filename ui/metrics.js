// The gateway's Prometheus text (/metrics, the ops door: no token) as samples, and the few
// summaries the overview shows: request rate, error rate, quantiles from histogram buckets.

// [{name, labels: {k: v}, value}] for every sample line.
export function parse(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    for (const pair of (m[3] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2];
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

export function sum(samples, name, filter = () => true) {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((a, s) => a + s.value, 0);
}

// The q-quantile (0..1) of a histogram family, all series together, from its cumulative
// buckets: the upper bound of the first bucket that holds it (null with no observation).
export function quantile(samples, family, q) {
  const buckets = new Map();
  for (const s of samples) {
    if (s.name !== `${family}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) || 0) + s.value);
  }
  const sorted = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
  const total = sorted.length ? sorted[sorted.length - 1][1] : 0;
  if (total === 0) return null;
  for (const [le, count] of sorted) {
    if (count >= q * total) return le;
  }
  return null;
}
