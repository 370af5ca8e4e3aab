#!/bin/sh
# The scaling model of doc/distributed.md ("What scaling to expect"): the
# efficiency bench/scaling.sh's job (5 adapting and 5 frozen iterations,
# f4 d=6, 1e6 hypercubes) would reach on R GPUs, within a node (NVLink) and
# between nodes (NCCL on sockets), for 1e9 samples per iteration (strong)
# and 1e9 per GPU (weak).
#   bench/scaling_model.sh [T1_ADAPT_MS T1_FROZEN_MS]
# T_R = T_1 / R + 5 C_a(R) + 5 C_f(R) + C_1(R), where an adapting
# iteration waits for its exchange, C_a(R) = W (1 - 1/R) + t_sum(R) +
# t_gather(R) (W: the allocation and the map's refinement, which every rank
# does whole), and a frozen one pauses the device for the latency of its
# small sum, C_f(R) = t_small(R), the next iteration being queued behind
# it (the host never waits for the round trip); C_1 is the first
# iteration's extra.  The sums' latency grows as log2 R (NCCL's trees),
# the gather's bytes as (R - 1) / R of 2 MB.  The constants are NCCL's own
# times on two H100s (../shared/device/nccl_mpi.c), and two tables follow:
# the first with W = 0.1 ms (the allocation kernels' order of magnitude at
# 1e6 hypercubes on one H100) and the first iteration's extra of two GPUs
# (doc/benchmarks.md, R36); the second with W and that extra fitted to
# bench/scaling.sh on four GPUs (R41: 0.316 ms per adapting iteration gives
# W = 0.32 ms; the first iteration's extra, 1.6 ms on NVLink and 2.9 ms on
# sockets at four GPUs, taken to grow as log2 R).
set -eu
TA=${1:-35.2}   # one GPU, one adapting iteration of 1e9 (ms)
TF=${2:-13.5}   # one GPU, one frozen iteration of 1e9 (ms)
table() {
awk -v ta="$TA" -v tf="$TF" -v W="$1" -v fit="$2" 'BEGIN {
  # path: small sum (2 doubles), the map sums (12,002 doubles), 1 MB gathered, first iteration
  split("nvlink sockets", path, " ")
  small["nvlink"] = 0.0175; sums["nvlink"] = 0.0202; mb["nvlink"] = 0.024; first["nvlink"] = 0.14
  small["sockets"] = 0.039; sums["sockets"] = 0.158; mb["sockets"] = 0.25; first["sockets"] = 2.25
  if (fit) { first["nvlink"] = 1.6; first["sockets"] = 2.9 }
  printf "| GPUs | path | strong, 1e9 per iteration | weak, 1e9 per GPU |\n|---|---|---|---|\n"
  n = split("2 4 8 64 512", Rs, " ")
  for (i = 1; i <= n; i++) for (p = 1; p <= 2; p++) {
    R = Rs[i]; P = path[p]
    if (P == "nvlink" && R > 8) continue
    lg = log(R) / log(2)
    ca = W * (1 - 1 / R) + sums[P] * lg + mb[P] * 2 * (R - 1) / R
    cf = small[P] * lg
    c1 = fit ? first[P] * lg / 2 : first[P]
    t1 = 5 * ta + 5 * tf
    strong = (t1 / R) / (t1 / R + 5 * ca + 5 * cf + c1)
    weak = t1 / (t1 + 5 * ca + 5 * cf + c1)
    printf "| %d | %s | %.0f%% | %.0f%% |\n", R, P == "nvlink" ? "NVLink, one node" : "NCCL on sockets, between nodes", 100 * strong, 100 * weak
  }
}'
}
echo "With the constants of two GPUs (W = 0.1 ms):"
echo
table 0.1 0
echo
echo "With W and the first iteration's extra fitted to four GPUs:"
echo
table 0.32 1
