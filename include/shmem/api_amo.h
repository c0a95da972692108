/* Atomics, signals, contexts, locks and the other families of the
 * OpenSHMEM API issue (expanded with SHMEM_FN, no include guard). */
