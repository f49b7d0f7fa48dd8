/* Named GPT presets: the papers' shapes (Ratel Table IV) and small ones. */
#include "nn.h"

#include <stdio.h>
#include <string.h>

static const struct nn_gpt_config presets[] = {
    /* name        L    A     H     S      V */
    {"gpt-6b", 28, 32, 4096, 1024, 50257, 0},
    {"gpt-13b", 40, 40, 5120, 1024, 50257, 0},
    {"gpt-30b", 48, 56, 7168, 1024, 50257, 0},
    {"gpt-70b", 80, 64, 8192, 1024, 50257, 0},
    {"gpt-135b", 88, 88, 11264, 1024, 50257, 0},
    {"gpt-175b", 96, 96, 12288, 1024, 50257, 0},
    {"gpt-276b", 112, 112, 14336, 1024, 50257, 0},
    {"gpt-412b", 128, 128, 16384, 1024, 50257, 0},
    /* small presets that run on a laptop */
    {"gpt-tiny", 2, 2, 32, 16, 16, 0},
    {"gpt-small", 4, 4, 128, 64, 256, 0},
    {"gpt-bench", 2, 16, 1024, 128, 1024, 0},
};
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

static const char *const names[] = {"gpt-6b", "gpt-13b", "gpt-30b", "gpt-70b", "gpt-135b",
                                    "gpt-175b", "gpt-276b", "gpt-412b", "gpt-tiny", "gpt-small",
                                    "gpt-bench", NULL};

const char *const *nn_gpt_preset_names(void) { return names; }

int nn_gpt_preset(const char *name, struct nn_gpt_config *cfg)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(presets[i].name, name)) {
            *cfg = presets[i];
            cfg->ffn = 4 * cfg->hidden;
            return 0;
        }
    return -1;
}
