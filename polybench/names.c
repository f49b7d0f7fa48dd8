/* The names mb-polybench's --kernel and --variant choose among, and
 * whether the command line names a word in a flag's list. */
#include "polybench.h"

#include <stdio.h>
#include <string.h>

int mb_pb_name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static void join(const char *const *names, int n, int split, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : i == split ? ";" : "|", names[i]);
}

void mb_pb_names_build(struct mb_pb_names *nm)
{
    memset(nm, 0, sizeof(*nm));
    for (size_t i = 0; i < mb_pb_nkernels(); i++) {
        const struct mb_pb_kernel *k = mb_pb_kernel_at(i);
        if (mb_pb_name_index(nm->kernel, nm->nkernel, k->name) < 0 && nm->nkernel < 32)
            nm->kernel[nm->nkernel++] = k->name;
        if (strcmp(k->variant, "pblas") != 0 && mb_pb_name_index(nm->variant, nm->nvariant, k->variant) < 0 &&
            nm->nvariant < 5)
            nm->variant[nm->nvariant++] = k->variant;
    }
    nm->ndist_kernels = nm->nkernel;
    /* pblas last among the distributed ones; the same --help with or
     * without ScaLAPACK (validate drops it from "all" when the build has none) */
    nm->variant[nm->nvariant++] = "pblas";
    nm->ndist_variants = nm->nvariant;
    for (size_t i = 0; i < mb_pbs_nkernels() && nm->nkernel < 32; i++)
        if (mb_pb_name_index(nm->kernel, nm->nkernel, mb_pbs_kernel_at(i)->name) < 0)
            nm->kernel[nm->nkernel++] = mb_pbs_kernel_at(i)->name;
    for (int v = 0; v < MB_PBS_NVARIANTS; v++)
        nm->variant[nm->nvariant++] = mb_pbs_variant_names[v];
    join(nm->kernel, nm->nkernel, nm->ndist_kernels, nm->kernel_choices, sizeof(nm->kernel_choices));
    join(nm->variant, nm->nvariant, nm->ndist_variants, nm->variant_choices, sizeof(nm->variant_choices));
}

int mb_pb_flag_names(int argc, char **argv, const char *flag, const char *word)
{
    size_t fl = strlen(flag);
    for (int i = 1; i < argc; i++) {
        const char *v = strncmp(argv[i], flag, fl) == 0 && argv[i][fl] == '=' ? argv[i] + fl + 1
                        : strcmp(argv[i], flag) == 0 && i + 1 < argc     ? argv[i + 1]
                                                                          : NULL;
        if (v && strstr(v, word))
            return 1;
    }
    return 0;
}
