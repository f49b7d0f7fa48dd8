/* Private to result.c (struct, shared HDF5 plumbing, writer) and
 * result_read.c (reader); see result.c for the file layout. */
#ifndef MB_RESULT_H5_H
#define MB_RESULT_H5_H

#include "harness.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

/* H5Pset_file_locking: 1.10.7+ and 1.12.1+. */
#if H5_VERSION_GE(1, 10, 7) && !(H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 12 && H5_VERS_RELEASE == 0)
#define MB_H5_LOCKING 1
#endif

#if H5_VERSION_GE(1, 12, 0)
#define mb_h5_reclaim(t, s, b) H5Treclaim(t, s, H5P_DEFAULT, b)
#else
#define mb_h5_reclaim(t, s, b) H5Dvlen_reclaim(t, s, H5P_DEFAULT, b)
#endif

/* One write or read: where errors go and the ids every step shares. */
struct h5 {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
    hid_t str;  /* variable-length UTF-8 string */
    hid_t gcpl; /* groups that track attribute creation order */
    H5E_auto2_t old_func;
    void *old_data;
};

/* Records "PATH: step: HDF5's reason" once (the innermost failure is the
 * informative one) and returns -1. Must run before any further HDF5 call,
 * since every API call clears the error stack. */
int mb_h5_fail(struct h5 *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Silences HDF5's stack printing and makes c->str and c->gcpl. */
int mb_h5_begin(struct h5 *c, const char *path, char *err, size_t errlen);
/* Closes them and restores the stack printing. */
void mb_h5_end(struct h5 *c);
/* File access: no file locking where the library allows; writing pins
 * the 1.8 file format. */
hid_t mb_h5_fapl(struct h5 *c, int for_write);
/* Frees r's measurements (metrics.c; part of mb_result_free). */
void mb_metric_free_all(struct mb_result *r);
/* A case name as a dataset name (malloc'd); see result.c. */
char *mb_h5_key(const char *name);

/* /summary rows: every field takes one 8-byte slot (uint64, double or a
 * char * for a variable-length string), so a row is simply
 * [case][labels...][bytes count iters nranks][11 doubles][check]. */
#define MB_SUM_NFIXED 15
#define MB_SUM_SLOT 8
#define MB_SUM_U64 0   /* fixed-field index of bytes, count, iters, nranks */
#define MB_SUM_F64 4   /* of t_min ... model */
#define MB_SUM_CHECK 14
#define MB_SUM_FIXED_SLOT(nlabels, i) (1 + (nlabels) + (i))
_Static_assert(sizeof(char *) <= MB_SUM_SLOT && sizeof(double) == MB_SUM_SLOT, "summary slots");

/* The compound type for these label names (fails on a clash with a fixed
 * field); used in memory and in the file, and on reading matched by field
 * name against what the file holds. */
hid_t mb_h5_summary_type(struct h5 *c, char *const *labels, size_t nlabels);

static inline void mb_h5_slot_set(unsigned char *row, size_t slot, const void *v, size_t n)
{
    memcpy(row + slot * MB_SUM_SLOT, v, n);
}

static inline void mb_h5_slot_get(const unsigned char *row, size_t slot, void *v, size_t n)
{
    memcpy(v, row + slot * MB_SUM_SLOT, n);
}

/* Out of memory is fatal in the harness. */
static inline void *mb_h5_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        mb_die(1, "out of memory");
    return p;
}

static inline char *mb_h5_xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        mb_die(1, "out of memory");
    return p;
}

#endif
