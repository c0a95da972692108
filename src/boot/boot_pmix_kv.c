/*
 * The PMIx bootstrap's key-value exchange and barriers (boot_pmix.c has the
 * overview): put is PMIx_Put (+ commit), fence is PMIx_Fence with data
 * collection, get is PMIx_Get, barrier is a fence without data.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "boot/boot.h"
#include "common/common.h"

#include "boot/boot_pmix_int.h"

static void full_key(char *out, size_t cap, const char *key)
{
    snprintf(out, cap, KEY_PREFIX "%s", key);
}

/* The key as stored: this initialization's (boot_pmix_int.h, epoch). */
static const char *epoch_key(char *out, size_t cap, const char *key)
{
    if (!px.epoch)
        return key;
    snprintf(out, cap, "%s@%u", key, px.epoch);
    return out;
}

dsm_status_t dsm_pmix_put_scoped(pmix_scope_t scope, const char *key,
                                 const void *val, size_t len)
{
    static char empty;
    pmix_value_t v;
    pmix_status_t rc;
    char ek[PMIX_MAX_KEYLEN + 1];

    key = epoch_key(ek, sizeof(ek), key);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = len ? (char *)val : &empty;
    v.data.bo.size = len;
    rc = PMIx_Put(scope, key, &v); /* copies the value */
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Put(%s, %zu bytes) "
                      "failed: %s",
                      (int)px.me.rank, key, len, PMIx_Error_string(rc));
        return DSM_ERR_IO;
    }
    return DSM_OK;
}

dsm_status_t dsm_pmix_put(const char *key, const void *val, size_t len)
{
    char k[DSM_BOOT_KEY_MAX + sizeof(KEY_PREFIX)];
    dsm_status_t st = dsm_pmix_check_key("put", key);
    if (st != DSM_OK)
        return st;
    if (len > DSM_BOOT_VAL_MAX)
        return DSM_ERR_OVERFLOW;
    full_key(k, sizeof(k), key);
    return dsm_pmix_put_scoped(PMIX_GLOBAL, k, val, len);
}

/* PMIx_Fence over the job; collect: with the data put so far. */
static dsm_status_t fence(int collect)
{
    pmix_info_t info;
    bool c = true;
    pmix_status_t rc;

    if (collect) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &c, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    } else {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    }
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Fence (%s) failed: %s",
                      (int)px.me.rank, collect ? "collecting data" : "barrier",
                      PMIx_Error_string(rc));
        return DSM_ERR_PEER;
    }
    return DSM_OK;
}

dsm_status_t dsm_pmix_fence(void)
{
    return fence(1);
}

/* The raw bytes of rank's value for an already prefixed key; wait: a key
 * not published yet is waited for (up to 10 s). */
dsm_status_t dsm_pmix_get_raw(int rank, const char *k, void *val, size_t *len,
                              int wait)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    dsm_status_t st = DSM_OK;
    char ek[PMIX_MAX_KEYLEN + 1];

    k = epoch_key(ek, sizeof(ek), k);
    if (rank < 0 || rank >= px.size) {
        dsm_log_error("pmix bootstrap: PE %d: get of '%s' from invalid PE "
                      "%d (the job has %d PEs)",
                      (int)px.me.rank, k, rank, px.size);
        return DSM_ERR_INVAL;
    }
    dsm_pmix_load_proc(&p, (pmix_rank_t)rank);
    /* A key its owner has not published yet is waited for, as the launcher
     * bootstrap does (Open MPI 4.1's server answers "not found" at once
     * when the owner has not committed it: seen under load in
     * test/pmix/boot.sh). Values read after a fence are there at once. */
    for (unsigned us = 1000, waited = 0;; waited += us, us = us < 64000 ? 2 * us : us) {
        rc = PMIx_Get(&p, k, NULL, 0, &v);
        if ((rc != PMIX_ERR_NOT_FOUND && rc != PMIX_ERR_PROC_ENTRY_NOT_FOUND) ||
            !wait || waited >= 10000000u)
            break;
        usleep(us);
    }
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND)
        return DSM_ERR_NOT_FOUND;
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Get(PE %d, %s) failed: %s",
                      (int)px.me.rank, rank, k, PMIx_Error_string(rc));
        return DSM_ERR_IO;
    }
    if (v->type != PMIX_BYTE_OBJECT) {
        dsm_log_error("pmix bootstrap: PE %d: PE %d's %s has PMIx type %s, "
                      "not a byte object",
                      (int)px.me.rank, rank, k, PMIx_Data_type_string(v->type));
        st = DSM_ERR_IO;
    } else if (v->data.bo.size > *len) {
        *len = v->data.bo.size;
        st = DSM_ERR_OVERFLOW;
    } else {
        if (v->data.bo.size)
            memcpy(val, v->data.bo.bytes, v->data.bo.size);
        *len = v->data.bo.size;
    }
    PMIX_VALUE_RELEASE(v);
    return st;
}

dsm_status_t dsm_pmix_get(int rank, const char *key, void *val, size_t *len)
{
    char k[DSM_BOOT_KEY_MAX + sizeof(KEY_PREFIX)];
    dsm_status_t st = dsm_pmix_check_key("get", key);
    if (st != DSM_OK)
        return st;
    full_key(k, sizeof(k), key);
    return dsm_pmix_get_raw(rank, k, val, len, 1);
}

dsm_status_t dsm_pmix_barrier(void)
{
    return fence(0);
}
