/* gnn/: growing the reused scratch arrays of readers and samplers. */
#include "gnn_internal.h"

#include <stdlib.h>

int gnn_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}
