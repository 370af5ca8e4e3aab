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
# times on two H100s (../shared/device/nccl_mpi.c; doc/benchmarks.md,
# "Several GPUs: the exchange on the devices") and bench/scaling.sh's first
# iterations; W is an assumption (0.1 ms, the allocation kernels' order of
# magnitude at 1e6 hypercubes on one H100), not a measurement.
set -eu
TA=${1:-35.2}   # one GPU, one adapting iteration of 1e9 (ms)
TF=${2:-13.5}   # one GPU, one frozen iteration of 1e9 (ms)
awk -v ta="$TA" -v tf="$TF" 'BEGIN {
  W = 0.1
  # path: small sum (2 doubles), the map sums (12,002 doubles), 1 MB gathered, first iteration
  split("nvlink sockets", path, " ")
  small["nvlink"] = 0.0175; sums["nvlink"] = 0.0202; mb["nvlink"] = 0.024; first["nvlink"] = 0.14
  small["sockets"] = 0.039; sums["sockets"] = 0.158; mb["sockets"] = 0.25; first["sockets"] = 2.25
  printf "| GPUs | path | strong, 1e9 per iteration | weak, 1e9 per GPU |\n|---|---|---|---|\n"
  n = split("2 4 8 64 512", Rs, " ")
  for (i = 1; i <= n; i++) for (p = 1; p <= 2; p++) {
    R = Rs[i]; P = path[p]
    if (P == "nvlink" && R > 8) continue
    lg = log(R) / log(2)
    ca = W * (1 - 1 / R) + sums[P] * lg + mb[P] * 2 * (R - 1) / R
    cf_strong = small[P] * lg
    cf_weak = cf_strong
    t1 = 5 * ta + 5 * tf
    strong = (t1 / R) / (t1 / R + 5 * ca + 5 * cf_strong + first[P])
    weak = t1 / (t1 + 5 * ca + 5 * cf_weak + first[P])
    printf "| %d | %s | %.0f%% | %.0f%% |\n", R, P == "nvlink" ? "NVLink, one node" : "NCCL on sockets, between nodes", 100 * strong, 100 * weak
  }
}'
