"""Stop 39: the connection-state cache (engine/connection_state.h: cache_slot's Fibonacci hash, direct
mapped, 12,288 entries) replayed on the CPU with gpu-connection-scaling's pattern: 256 submitter
threads a direction, thread t cycling flows t, t + 256, ..., one 32-write window a visit. Prints the
share of lookups that miss over three cycles (the first all cold): steady state is (3 x share - 1) / 2.
"""
import random
def slot(n, e): return (((n*0x9E3779B1) & 0xffffffff) * e) >> 32
def sim(contexts_send, contexts_recv, threads=256, entries=12288, base=0x100, rounds=3, shuffle=False):
    tags = [0]*entries
    # send flows: QPNs base + 0..q-1 ; recv responders: base + q .. 2q-1
    seqs = []
    for t in range(threads):
        seqs.append([base + f for f in range(t, contexts_send, threads)])
    for t in range(threads if contexts_recv else 0):
        seqs.append([base + contexts_send + f for f in range(t, contexts_recv, threads)])
    pos = [0]*len(seqs)
    lookups = misses = 0
    total = sum(len(s) for s in seqs) * rounds
    order = list(range(len(seqs)))
    for step in range(total // len(seqs)):
        if shuffle: random.shuffle(order)
        for k in order:
            s = seqs[k]
            n = s[pos[k] % len(s)]; pos[k] += 1
            sl = slot(n, entries)
            if tags[sl] != n: misses += 1
            tags[sl] = n; lookups += 1
    return misses / lookups
for q in (1024, 4096, 8192, 32768):
    print("both", q, round(sim(q, q), 4), round(sim(q, q, shuffle=True), 4), " send", round(sim(q, 0),4))
