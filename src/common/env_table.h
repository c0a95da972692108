/*
 * The environment table: every SHMEM_* variable of the library and of
 * shmem_launcher, defined once as X-macros (name, type, field, default,
 * help). The library parses it into dsm_env at init and SHMEM_INFO=1
 * prints it (src/runtime/env.h, env.c); the launcher takes the names and
 * defaults of its own variables from DSM_ENV_LAUNCHER. Data only: no
 * code, no include, so every layer may use it.
 */
#ifndef DSM_COMMON_ENV_TABLE_H
#define DSM_COMMON_ENV_TABLE_H

/* X(name, type, field, default, help). type: SIZE (bytes, K/M/G suffixes),
 * INT, BOOL, STR. */
#define DSM_ENV_LIST(X)                                                        \
    X(SHMEM_SYMMETRIC_SIZE, SIZE, symmetric_size, "1G",                        \
      "bytes of symmetric heap per PE (K/M/G suffixes)")                       \
    X(SHMEM_DEBUG, BOOL, debug, "0",                                           \
      "print debugging messages (allocation failures, selections, "           \
      "collectives waiting over 10 s)")                                       \
    X(SHMEM_MALLOC_WARN, BOOL, malloc_warn, "1",                               \
      "print one line on this PE's first failed symmetric allocation "        \
      "(routine, sizes, what to set); 0 = silent (SHMEM_DEBUG: every one)")   \
    X(SHMEM_CHECK, INT, check, "1",                                            \
      "misuse checks: 0 off, 1 the cheap ones (collective arguments agree, "   \
      "context and team handles, wait words, lock re-entry), 2 also every "    \
      "RMA/AMO target within one live allocation (intro_shmem(3))")            \
    X(SHMEM_INFO, BOOL, info, "0",                                             \
      "print every environment variable with its value at init")              \
    X(SHMEM_VERSION, BOOL, version, "0",                                       \
      "print the library version at init")                                    \
    X(SHMEM_BOOTSTRAP, STR, bootstrap, "auto",                                 \
      "bootstrap: auto, launcher, pmix or single")                            \
    X(SHMEM_PEER_TIMEOUT, INT, peer_timeout, "8",                              \
      "seconds a PE on another node may stay silent (no heartbeat: link "    \
      "down, node or process stopped) before the PE watching it ends the "   \
      "job with a line naming it; 0 = never (e.g. under a debugger)")       \
    X(SHMEM_SDMA_BACKEND, STR, sdma_backend, "auto",                           \
      "DMA backend: auto, cuda, hsa or cpu")                                  \
    X(SHMEM_SDMA_ENGINES, INT, sdma_engines, "1",                              \
      "DMA engines (queues for RMA) per PE; cpu backend: engine threads")     \
    X(SHMEM_SDMA_QUEUE_DEPTH, INT, sdma_queue_depth, "4096",                   \
      "commands per engine queue (power of two)")                             \
    X(SHMEM_SDMA_REQUEST_DEPTH, INT, sdma_request_depth, "4096",               \
      "entries of the request ring to the proxy thread (power of two)")       \
    X(SHMEM_SDMA_INLINE_MAX, SIZE, sdma_inline_max, "auto",                    \
      "blocking RMA to a local PE's host memory up to this size is a direct " \
      "copy by the caller; auto = the backend's measured default")            \
    X(SHMEM_SDMA_NBI_INLINE_MAX, SIZE, sdma_nbi_inline_max, "auto",            \
      "put_nbi/get_nbi to a local PE's host memory up to this size is a "     \
      "direct copy at issue; larger ones go to the engines; auto = the "      \
      "backend's measured default, 0 = always the engines")                  \
    X(SHMEM_SDMA_STATS, BOOL, sdma_stats, "0",                                 \
      "print per-PE command, batch and phase time counters at finalize")      \
    X(SHMEM_DEVICE_HEAP_SIZE, SIZE, device_heap_size, "1G",                    \
      "bytes of symmetric heap in GPU memory per PE (cuda and hsa "           \
      "backends; shmemx_malloc_device); 0 = none")                            \
    X(SHMEM_CUDA_DEVICE, INT, cuda_device, "-1",                               \
      "GPU of this PE (cuda backend); -1 = the GPU nearest to its cores "     \
      "(PCI locality), balanced among the node's PEs")                        \
    X(SHMEM_CUDA_BATCH_MIN, INT, cuda_batch_min, "2",                          \
      "cuda backend: runs of at least this many copies go through one "       \
      "cuMemcpyBatchAsync, shorter ones through cuMemcpyAsync")               \
    X(SHMEM_CUDA_PREFER_CE, BOOL, cuda_prefer_ce, "0",                         \
      "cuda backend: ask the driver to keep batched copies (also within one " \
      "GPU) on the copy engines rather than SM copy kernels")                 \
    X(SHMEM_CUDA_GRAPH_COPIES, INT, cuda_graph_copies, "8",                    \
      "cuda backend: a collective's run of copies seen twice is replayed "   \
      "from a cached CUDA graph; graphs kept per chain queue, 0 = off")       \
    X(SHMEM_CUDA_COALESCE, BOOL, cuda_coalesce, "1",                           \
      "cuda backend: hold back put_nbi copies while the engine's stream "     \
      "runs and post them as one batch when it drains")                       \
    X(SHMEM_CUDA_MERGE, BOOL, cuda_merge, "1",                                 \
      "cuda backend: merge copies adjacent at both ends into one copy")       \
    X(SHMEM_CUDA_COUNT_LAUNCHES, BOOL, cuda_count_launches, "0",               \
      "cuda backend: count the library's kernel and host-function launches " \
      "and print them per PE at finalize")                                    \
    X(SHMEM_HSA_LIBRARY, STR, hsa_library, "libhsa-runtime64.so.1",           \
      "hsa backend: the hsa-runtime64 library to load (a path; the engine "  \
      "model test/hsa/.libs/libhsamodel.so runs the backend without a GPU)") \
    X(SHMEM_HSA_MAX_QUEUES, INT, hsa_max_queues, "0",                         \
      "hsa backend: at most this many SDMA queues per process (RMA, chain " \
      "and the device API's queue); one more is refused with one line; 0 = " \
      "no cap")                                                               \
    X(SHMEM_HSA_SDMA_ENGINE, INT, hsa_sdma_engine, "-1",                       \
      "hsa backend: create every SDMA queue on this engine id "             \
      "(hsaKmtCreateQueueExt, ROCm >= 6.4); -1 = the driver's choice")        \
    X(SHMEM_DEV_FIFO_SLOTS, INT, dev_fifo_slots, "4096",                       \
      "device API: request FIFO slots per PE (power of two, 2 .. 2^20; 32 "  \
      "bytes each, pinned host memory)")                                      \
    X(SHMEM_DEV_STORE_MAX, SIZE, dev_store_max, "auto",                        \
      "device API: putmem/getmem up to this many bytes are loads and stores " \
      "by the calling GPU thread, larger ones go to the copy engines; auto " \
      "= the measured default (docs/PERFORMANCE.md)")                        \
    X(SHMEM_STREAM_STORE_MAX, SIZE, stream_store_max, "65536",                 \
      "on-stream fcollect/alltoall: blocks up to this many bytes per PE "    \
      "move by the stores of one CTA of a library kernel, one launch per "   \
      "call (both synchronisation phases in it); larger ones, or all with "  \
      "0, by the copy engines between stream memory operations (no SM)")    \
    X(SHMEM_STREAM_LL_MAX, SIZE, stream_ll_max, "16384",                      \
      "on-stream fcollect/alltoall: blocks up to this many bytes per PE "    \
      "(teams of 2-9 PEs, dest in the device heap) go in the LL form: one "  \
      "launch, 8 data bytes and their flags per 16-byte store into the "     \
      "receiver's scratch, no synchronisation phase; 0 = off. The same on "  \
      "every PE; reserves 64 x 4 x this x min(PEs - 1, 8) bytes at the top " \
      "of the device heap")                                                  \
    X(SHMEM_DEV_PROXY_SPIN_US, INT, dev_proxy_spin_us, "200",                  \
      "device API: the proxy thread polls the FIFO without sleeping this "   \
      "long after the last request, then sleeps between polls in steps "     \
      "growing from 2 us to 10 us, and to 50 us after 20 ms idle")           \
    X(SHMEM_DEV_NEAR_PES, INT, dev_near_pes, "8",                              \
      "device API (cuda): the segment table rows of up to this many PEs "   \
      "around this one (0 to 8) travel in the kernel's handle, read "        \
      "through the constant cache; other PEs' rows are loads from device "   \
      "memory, which a quiet's system fence evicts from L1; 0 = every row " \
      "from device memory")                                                  \
    X(SHMEM_DEV_STALL_TIMEOUT, INT, dev_stall_timeout, "10",                   \
      "device API: seconds a kernel's wait for the copy engines or the "     \
      "request FIFO, or the proxy's for a kernel's request or the engines, " \
      "may see no progress before one line with the counters ends the job; " \
      "0 = wait for ever")                                                    \
    X(SHMEM_DEV_REQ_TRIGGER, BOOL, dev_req_trigger, "0",                       \
      "device API: shmemx_req_device hands out trigger-mode handles (a "      \
      "kernel's start is one store) where a request allows it; 0 = proxy "    \
      "mode only (trigger mode hung on the H200, shmemx_dev(3))")            \
    X(SHMEM_DEV_REQ_TRIGGER_WORD, STR, dev_req_trigger_word, "dev",            \
      "device API, trigger mode, a team of one: where the trigger word the " \
      "engines wait on lives: dev (GPU memory) or host (pinned host memory)")\
    X(SHMEM_BIND_TO, STR, bind_to, "auto",                                     \
      "bind each PE to its share of the node at init: core, numa, none, or "  \
      "auto (core when the node's PEs fit its cores, else none); the "       \
      "launcher's --bind-to sets it")                                         \
    X(SHMEM_WAIT_MODE, STR, wait_mode, "auto",                                 \
      "how blocked PEs wait: spin (spin, then yield), sleep (sleep at "      \
      "once, never spin), auto (where PEs outnumber the cores yield a few "  \
      "times, then sleep; else as spin)")                                     \
    X(SHMEM_SDMA_PROXY, STR, sdma_proxy, "auto",                               \
      "host proxy thread: auto (only for backends whose engines cannot "      \
      "take requests themselves), 1 always, 0 never")                         \
    X(SHMEM_BCAST_ALGORITHM, STR, bcast_algorithm, "auto",                     \
      "broadcast: auto, eager (root copies into the members' eager areas), " \
      "pull (members copy), push (root's engine copies) or bcast (push, "    \
      "two destinations per engine command)")                                  \
    X(SHMEM_FCOLLECT_ALGORITHM, STR, fcollect_algorithm, "auto",               \
      "fcollect/collect variant: auto, eager (not collect), pcpy, b2b, "     \
      "bcast or direct")                                                       \
    X(SHMEM_ALLTOALL_ALGORITHM, STR, alltoall_algorithm, "auto",               \
      "alltoall(s) variant: auto, eager, pcpy, b2b, swap or direct")          \
    X(SHMEM_PRELAUNCH_DEPTH, INT, prelaunch_depth, "2",                        \
      "persistent collectives: instances posted ahead behind a trigger "       \
      "(0: each posted at its start; at most 64)")                             \
    X(SHMEM_PERSISTENT_SYNC, STR, persistent_sync, "host",                     \
      "persistent collectives on GPU buffers (pcpy, b2b), their one "         \
      "exchange per instance: host (ready by the CPU into host words, "      \
      "arrival by the engines into host words) or dev (both through "        \
      "device words, waited for on the stream; what trigger-mode kernel "    \
      "handles over several GPUs need)")                                      \
    X(SHMEM_COLL_LOCAL_MERGE_MAX, SIZE, coll_local_merge_max, "64K",           \
      "blocking AllGather/AlltoAll chains on GPU memory: a local block up "  \
      "to this size waits to be posted with the first peer's block (one "     \
      "doorbell) instead of alone at entry; 0 = always at entry")            \
    X(SHMEM_COLL_DIRECT_MAX, SIZE, coll_direct_max, "auto",                    \
      "auto: bytes per peer up to which host-memory collectives are copied "  \
      "by the caller (direct) rather than by engine chains")                  \
    X(SHMEM_COLL_EAGER_MAX, SIZE, coll_eager_max, "auto",                      \
      "auto: bytes per message (per PE, per peer for alltoall) up to which "  \
      "host-memory collectives copy into the receivers' eager area (one "    \
      "message per pair, no ready round); 0 = off")                          \
    X(SHMEM_FCOLLECT_PCPY_MIN, SIZE, fcollect_pcpy_min, "auto",                \
      "auto: bytes per PE from which fcollect uses pcpy instead of b2b")      \
    X(SHMEM_ALLTOALL_PCPY_MIN, SIZE, alltoall_pcpy_min, "auto",                \
      "auto: bytes per peer from which alltoall uses pcpy instead of b2b")    \
    X(SHMEM_FORCE_NETWORK, BOOL, force_network, "0",                           \
      "treat every PE as its own node: all traffic between PEs goes "         \
      "through libfabric (tests the inter-node path on one machine)")         \
    X(SHMEM_OFI_PROVIDER, STR, ofi_provider, "auto",                           \
      "libfabric provider for PEs on other nodes (e.g. tcp;ofi_rxm, "         \
      "sockets, verbs;ofi_rxm); auto = the first with RMA and atomics")       \
    X(SHMEM_OFI_DOMAIN, STR, ofi_domain, "auto",                               \
      "libfabric domain (interface or device) name, e.g. eth0, lo, mlx5_0; " \
      "auto = the one on the NIC nearest the PE (lo when "                    \
      "SHMEM_FORCE_NETWORK runs on one node), else the provider's first")    \
    X(SHMEM_OFI_PROGRESS_US, INT, ofi_progress_us, "-1",                       \
      "interval of the network progress thread, in us (a computing PE of a " \
      "manual-progress provider answers remote gets and atomics within "     \
      "it; at most 100000); 0 = no thread (progress inside OpenSHMEM calls "   \
      "only); -1 = 100 where the node has two cores per PE, else 1000")        \
    X(SHMEM_OFI_CTX_EPS, INT, ofi_ctx_eps, "4",                                \
      "network endpoints that shmem contexts may open besides the default "  \
      "context's (0-64); contexts past them share the least used one "      \
      "(each costs ~60 ms to open on tcp;ofi_rxm, plus a connection per PE)") \
    X(SHMEM_OFI_COMPLETION, STR, ofi_completion, "auto",                       \
      "how quiet completes network puts: delivery (FI_DELIVERY_COMPLETE), "   \
      "read (a read from each PE written, FI_ORDER_RAW) or auto (delivery "   \
      "where offered)")                                                     \
    X(SHMEM_OFI_FENCE, STR, ofi_fence, "auto",                                 \
      "how shmem_fence orders network writes where the provider does not "   \
      "keep them in order: target (the next write to a PE written before "   \
      "the fence waits for that PE's writes), quiet (a full quiet) or auto " \
      "(free where writes are ordered, else target)")                        \
    DSM_ENV_LAUNCHER(X)

/* The launcher's own variables (src/launcher reads them, with these names
 * and defaults; the PEs inherit them, so SHMEM_INFO shows them too). */
#define DSM_ENV_LAUNCHER(X)                                                    \
    X(SHMEM_LAUNCHER_TIMEOUT, STR, launcher_timeout, "",                       \
      "shmem_launcher: seconds after which the job is ended (exit 124) "      \
      "when --timeout is not given; empty = no limit")                        \
    X(SHMEM_MPS_CONTROL, STR, mps_control, "nvidia-cuda-mps-control",          \
      "shmem_launcher --mps: the CUDA MPS control program it starts the "    \
      "job's daemon with and stops it with")                                  \
    X(SHMEM_LAUNCHER_TRACE, STR, launcher_trace, "0",                          \
      "shmem_launcher: 1 = a line on stderr, with the time, for each event "  \
      "of the job's life (PEs started, connected, aborting, exiting; "        \
      "signals sent): where the time of a slow start or end goes")

#endif /* DSM_COMMON_ENV_TABLE_H */
