/* Teams and collectives (expanded with SHMEM_FN, no include guard). */
