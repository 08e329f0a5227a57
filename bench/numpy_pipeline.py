#!/usr/bin/env python3
"""The reference pipeline vectorised in numpy f64, for a speed baseline.

Same row, parameters and op order as bench_trace's every-stage case:
penalties (repetition 1.1 over prompt+output ids, presence 0.2, frequency 0.1
over output ids), the logprob over all ids, T = 0.7, top-k 50, top-p 0.9 over
the kept set, min-p 0.05 over the kept set, softmax, inverse CDF. Two ways
to rank: np.argpartition + sort of the k best (the fastest numpy form), and a
full np.argsort of the row. The "traced" form also keeps what the C++ trace
keeps: each stage's logits and its distribution over the whole row (raw,
after the penalties, after temperature). Prints the median milliseconds per
row of each form.
"""
import sys
import time

import numpy as np

V = 128256
T, K, P, M = 0.7, 50, 0.9, 0.05
REP, PRES, FREQ = 1.1, 0.2, 0.1


def history(n):
    return np.array([(i * 7919) % V for i in range(n)], dtype=np.int64)


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def pipeline(x, prompt, output, u, full_sort, traced=False):
    stages = [(x.copy(), softmax(x))] if traced else None
    logits = x.copy()
    context = np.unique(np.concatenate([prompt, output]))
    vals = logits[context]
    logits[context] = np.where(vals > 0, vals / REP, vals * REP)
    ids, counts = np.unique(output, return_counts=True)
    logits[ids] -= FREQ * counts + PRES
    if traced:
        stages.append((logits.copy(), softmax(logits)))
    m = logits.max()
    logprob_all = (logits - m) - np.log(np.exp(logits - m).sum())
    scaled = logits / T
    if traced:
        stages.append((scaled.copy(), softmax(scaled)))
    if full_sort:
        order = np.lexsort((np.arange(V), -scaled))[:K]
    else:
        part = np.argpartition(-scaled, K)[:K]
        order = part[np.lexsort((part, -scaled[part]))]
    kept = np.sort(order)
    e = np.exp(scaled[kept] - scaled[kept].max())
    q = e / e.sum()
    q_by_rank = q[np.searchsorted(kept, order)]
    crossing = int(np.searchsorted(np.cumsum(q_by_rank), P)) + 1
    kept = np.sort(order[:crossing])
    e = np.exp(scaled[kept] - scaled[kept].max())
    q = e / e.sum()
    kept = kept[q >= M * q.max()]
    e = np.exp(scaled[kept] - scaled[kept].max())
    q = e / e.sum()
    token = int(kept[min(int(np.searchsorted(np.cumsum(q), u, side="right")), len(kept) - 1)])
    return token, float(logprob_all[token])


def main():
    x = np.fromfile(sys.argv[1], dtype=np.float64)
    assert x.size == V, x.size
    prompt, output = history(500), history(500)
    forms = ((False, False, "argpartition"), (True, False, "full argsort"), (False, True, "argpartition, traced"))
    for full_sort, traced, name in forms:
        times = []
        for _ in range(30):
            start = time.perf_counter()
            pipeline(x, prompt, output, 0.5, full_sort, traced)
            times.append(time.perf_counter() - start)
        print(f"numpy {np.__version__} every-stage pipeline ({name}): median {1e3 * np.median(times):.3f} ms per row")


if __name__ == "__main__":
    main()
