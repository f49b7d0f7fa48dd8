/* The mode registry: one row of modes.def per mode. */
#include "zero.h"

#include <string.h>

const struct zero_mode_ops *const zero_modes[] = {
#define ZERO_MODE(sym) &zero_mode_##sym,
#include "modes.def"
#undef ZERO_MODE
    NULL,
};

const struct zero_mode_ops *zero_mode_find(const char *name)
{
    for (int i = 0; name && zero_modes[i]; i++)
        if (strcmp(zero_modes[i]->name, name) == 0)
            return zero_modes[i];
    return NULL;
}

const char *zero_mode_names(void)
{
    static char buf[512];
    if (!buf[0])
        for (int i = 0; zero_modes[i]; i++) {
            size_t k = strlen(buf);
            snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? "|" : "", zero_modes[i]->name);
        }
    return buf;
}

int zero_mode_needs_threads(const struct zero_mode_ops *m, const struct zero_opts *o)
{
    return m->thread_multiple || (m->uses_progress && o->progress == ZERO_PROGRESS_THREAD);
}

int zero_run_sync(struct zero_run *z, char *err, size_t len)
{
    return z->mode->sync ? z->mode->sync(z, err, len) : 0;
}
