/* "Model, paper's inputs": our step model (model.c) fed the DisDP paper's
 * setting, so a reader sees how much of its 3.98x traffic and overlap
 * alone explain (papers/disdp.md §4: about 1.3x from bytes). */
#include "zero.h"

#include <stdlib.h>

void zero_paper_inputs_default(struct zero_paper_inputs *p)
{
    p->gpu_flops = 312e12 * 0.5;
    p->micro_batch = 8;
    p->gpu_adam_params_s = 1.555e12 / 28;
    p->cpu_adam_params_s = 2 * 187.7e9 / 28;
    p->ps_storage_Bps = 26e9;
}

int zero_paper_table(const struct zero_paper_inputs *p, struct zero_paper_row *rows, char *err, size_t errlen)
{
    static const double gbps[2] = {100, 200};
    struct nn_gpt_config cfg;
    if (nn_gpt_preset("gpt-175b", &cfg) != 0 || p->micro_batch < 1) {
        snprintf(err, errlen, "paper table: micro_batch %d (need >= 1)", p->micro_batch);
        return -1;
    }
    int nl = cfg.layers + 2;
    struct zero_model_layer *layers = calloc((size_t)nl, sizeof *layers);
    size_t *numel = calloc((size_t)nl, sizeof *numel);
    int rc = -1;
    if (!layers || !numel) {
        snprintf(err, errlen, "paper table: out of memory");
        goto out;
    }
    zero_model_gpt_layers(&cfg, p->micro_batch, layers);
    for (int i = 0; i < nl; i++)
        numel[i] = layers[i].numel;
    for (int g = 0; g < 2; g++) {
        struct zero_paper_row *r = rows + g * ZERO_MODEL_NMODES;
        for (int m = 0; m < ZERO_MODEL_NMODES; m++) {
            /* On the GPU for ZeRO-3; the host pool for offload; the PS's CPU for disdp. */
            struct zero_model_in in = {.W = 8, .micro = 1, .nlayers = nl, .layers = layers, .param_bytes = 2,
                                       .grad_bytes = 2, .gemm_flops = p->gpu_flops,
                                       .adam_params_s = m == ZERO_MODEL_DISDP ? p->cpu_adam_params_s
                                                                              : p->gpu_adam_params_s,
                                       .pool_adam_params_s = p->cpu_adam_params_s,
                                       .storage_Bps = p->ps_storage_Bps, .ps_bytes_per_param = 26,
                                       .link_gbps = gbps[g]};
            r[m].link_gbps = gbps[g];
            r[m].mode = (enum zero_model_mode)m;
            if (zero_model_step(r[m].mode, &in, &r[m].model, err, errlen) != 0 ||
                zero_closed_form(r[m].mode, numel, nl, in.W, 1, 2, 2, &r[m].bytes) != 0)
                goto out;
        }
        for (int m = 0; m < ZERO_MODEL_NMODES; m++)
            r[m].over_disdp = r[m].model.step / r[ZERO_MODEL_DISDP].model.step;
    }
    rc = 0;
out:
    free(layers);
    free(numel);
    return rc;
}

void zero_paper_table_print(FILE *f, const struct zero_paper_inputs *p, const struct zero_paper_row *rows)
{
    fprintf(f, "# model, paper's inputs: gpt-175b, W=8, bf16 wire, micro-batch %d x 1024 tokens, "
               "GPU %.0f TFLOP/s [inf], PS storage %.0f GB/s [sec]\n",
            p->micro_batch, p->gpu_flops / 1e12, p->ps_storage_Bps / 1e9);
    fprintf(f, "%-6s %-14s %10s %10s %10s %10s %10s %11s %11s %9s %7s\n", "Gb/s", "mode", "step(s)", "compute",
            "wire", "exp.wire", "exp.opt", "send(GB)", "recv(GB)", "/disdp", "paper");
    for (int i = 0; i < ZERO_PAPER_ROWS; i++) {
        const struct zero_paper_row *r = &rows[i];
        char paper[16] = "-";
        if (r->mode == ZERO_MODEL_OFFLOAD)
            snprintf(paper, sizeof paper, "%.2fx", ZERO_PAPER_SPEEDUP);
        fprintf(f, "%-6.0f %-14s %10.2f %10.2f %10.2f %10.2f %10.2f %11.2f %11.2f %8.2fx %7s\n", r->link_gbps,
                zero_model_mode_names[r->mode], r->model.step, r->model.compute, r->model.wire,
                r->model.exposed_wire, r->model.exposed_optimizer, r->bytes.send / 1e9, r->bytes.recv / 1e9,
                r->over_disdp, paper);
    }
    fprintf(f, "# paper: DisDP 3.98x over ZeRO-Infinity [abs]; zero-offload stands for ZeRO-Infinity here "
               "(no NVMe on the workers, no interference in the model)\n");
}
