#!/usr/bin/env bash
# Pools the runs of bench/governance-cell.sh: reads the `| run | off | on | ratio | ...` rows
# it prints (from one or more saved outputs) and prints, per group, what the per-run ratios
# say together:
#   runs, the median ratio with its quartiles, the share of runs at or above 0.95, the
#   geometric mean of the ratios, the throughput-weighted total (sum on / sum off), and the
#   median store-thread CPU per request.
# A line `# LABEL ...` starts a group named LABEL (bench runs of two binaries saved in one file,
# as `# /tmp/tp-before` and `# /tmp/tp-after` headers); without one, each file is one group.
# Groups print in the order first seen. Ratios are recomputed from the two rates, not read from
# the rounded column.
#
#   bench/cell-summary.sh FILE...
set -euo pipefail
(($#)) || { echo "usage: $0 FILE..." >&2; exit 2; }
awk '
  FNR == 1 { group = FILENAME }
  /^# / { group = $2; next }
  /^\| *[0-9]+ *\|/ {
    split($0, c, "|")
    off = c[3] + 0; on = c[4] + 0
    if (off <= 0 || on <= 0) next
    if (!(group in n)) order[++groups] = group
    k = ++n[group]
    ratio[group, k] = on / off
    store[group, k] = c[8] + 0
    sum_off[group] += off; sum_on[group] += on
    log_sum[group] += log(on / off)
  }
  # The q-quantile of values v[1..m] (sorted in place), interpolated as quantile type 7.
  function quantile(v, m, q,    h, lo) {
    h = (m - 1) * q + 1; lo = int(h)
    return lo >= m ? v[m] : v[lo] + (h - lo) * (v[lo + 1] - v[lo])
  }
  function sort_values(v, m,    i, j, t) {
    for (i = 2; i <= m; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
  }
  END {
    print "| group | runs | median on / off (quartiles) | runs >= 0.95 | geometric mean | total on / total off | store thread µs per request (median) |"
    print "|---|---|---|---|---|---|---|"
    for (g = 1; g <= groups; g++) {
      name = order[g]; m = n[name]; split("", r); split("", s); above = 0
      for (i = 1; i <= m; i++) { r[i] = ratio[name, i]; s[i] = store[name, i]; if (r[i] >= 0.95) above++ }
      sort_values(r, m); sort_values(s, m)
      printf "| %s | %d | %.3f (%.3f-%.3f) | %.0f%% | %.3f | %.3f | %.2f |\n", name, m,
        quantile(r, m, 0.5), quantile(r, m, 0.25), quantile(r, m, 0.75), 100 * above / m,
        exp(log_sum[name] / m), sum_on[name] / sum_off[name], quantile(s, m, 0.5)
    }
  }' "$@"
