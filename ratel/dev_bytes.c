/* The device arena's bytes as the trainer allocates them (trainer.c's
 * setup, in the same order, each piece rounded to 64 as the arena aligns
 * it), so --plan's device need and the trainer's peak are one number. */
#include "ratel.h"

/* what take() and nn's zalloc ask the arena for: at least 64, rounded up to 64 */
static uint64_t r64(uint64_t b) { return b ? (b + 63) / 64 * 64 : 64; }

uint64_t ratel_dev_region_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec)
{
    uint64_t region = 64, in = r64((uint64_t)B * (uint64_t)cfg->seq * (uint64_t)cfg->hidden *
                                   nn_dtype_size(prec.act));
    for (int i = 0; i <= cfg->layers + 1; i++) {
        uint64_t sum = i > 0 ? in : 0; /* a block's or the head's input first */
        for (int j = 0; j < nn_gpt_intra_count(cfg, i); j++) {
            uint64_t bytes;
            nn_gpt_intra_account(cfg, B, prec, i, j, &bytes, NULL);
            sum += (bytes + 63) / 64 * 64;
        }
        region = sum > region ? sum : region;
    }
    return region;
}

uint64_t ratel_dev_bytes(const struct nn_gpt_config *cfg, int B, struct nn_precision prec,
                         enum ratel_system sys)
{
    uint64_t M = (uint64_t)B * (uint64_t)cfg->seq, H = (uint64_t)cfg->hidden;
    uint64_t act = nn_dtype_size(prec.act), total = nn_workspace_bytes(cfg, B), maxp = 0;
    int shared = sys == RATEL_SYS_RATEL || sys == RATEL_SYS_ZERO_INFINITY;
    if (shared)
        total += 2 * ratel_dev_region_bytes(cfg, B, prec);
    for (int i = 0; i <= cfg->layers + 1; i++) {
        struct nn_layer_account a;
        nn_gpt_layer_account(cfg, B, prec, i, &a);
        maxp = a.params > maxp ? a.params : maxp;
        /* the layer's input (embed: token ids; head: also its targets),
         * a block's or the head's in the regions when they are shared */
        total += i == 0 ? r64(M * 4) : (shared ? 0 : r64(M * H * act)) +
                                           (i == cfg->layers + 1 ? r64(M * 4) : 0);
        for (int j = 0; !shared && j < nn_gpt_intra_count(cfg, i); j++) {
            uint64_t bytes;
            nn_gpt_intra_account(cfg, B, prec, i, j, &bytes, NULL);
            total += r64(bytes);
        }
        if (sys == RATEL_SYS_NO_OFFLOAD) /* P32, m, v, P16 */
            total += 3 * r64(a.params * 4) + r64(a.params * 2);
    }
    /* hidden state and its gradient, P16 and G16 slots: two of each */
    return total + 2 * (2 * r64(M * H * 4) + r64(maxp * 2) + r64(maxp * 2));
}
