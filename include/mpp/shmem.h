/* Deprecated header location (OpenSHMEM 1.1): use <shmem.h>. */
#include <shmem.h>
