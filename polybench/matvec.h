/* What atax and bicg share: A (M x N) in M/Px x N/Py blocks, a local
 * matrix-vector product in each direction, each summed over the grid row
 * or column with the registry's allreduce. Internal to polybench/. */
#ifndef MB_PB_MATVEC_H
#define MB_PB_MATVEC_H

#include "polybench.h"

struct mb_pb_mv {
    long long m, n, ml, nl;
    double *a;                 /* ml x nl */
    double *xin, *yin;         /* inputs: nl (column block), ml (row block) */
    double *rowpart, *rowsum;  /* ml: A xin, summed over the row */
    double *colpart, *colsum;  /* nl: A^T yin, summed over the column */
};

int mb_pb_mv_divides(const struct mb_pb_sizes *s, int px, int py, char *why, size_t len);
int mb_pb_mv_init(struct mb_pb_inst *in, struct mb_pb_mv *v);
/* rowsum = sum over the row of A_block xin */
int mb_pb_mv_rowsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *xin);
/* colsum = sum over the column of A_block^T yin */
int mb_pb_mv_colsum(const struct mb_pb_inst *in, struct mb_pb_mv *v, const double *yin);
void mb_pb_mv_traffic(const struct mb_pb_sizes *s, const struct mb_pb_grid *g, struct mb_pb_traffic *t);
void mb_pb_mv_fini(struct mb_pb_inst *in, struct mb_pb_mv *v);

#endif
