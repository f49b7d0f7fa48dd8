/* zero/paper_table.c: the "model, paper's inputs" table's arithmetic (not
 * the paper's number): the ratio column is each step over disdp's at the
 * same rate; compute is the same in every row and is the model's FLOPs
 * over the GPU rate; the wire terms are the closed-form bytes over the
 * link rate, halving from 100 to 200 Gb/s; the bytes are 3S(W-1)/W (plus
 * under W elements of padding per layer) and DisDP's S out, 2S in. The
 * table is printed for the log. */
#include "../../zero/zero.h"
#include "check.h"

#include <math.h>
#include <string.h>

#define REL(a, b) (fabs((a) - (b)) <= 1e-12 * fabs(b))

int main(void)
{
    struct zero_paper_inputs p;
    struct zero_paper_row r[ZERO_PAPER_ROWS];
    char err[256];
    zero_paper_inputs_default(&p);
    EXPECT(zero_paper_table(&p, r, err, sizeof err) == 0);
    zero_paper_table_print(stdout, &p, r);

    struct nn_gpt_config cfg;
    struct nn_layer_account tot;
    struct nn_precision prec = {NN_F32, NN_F32, NN_F32};
    EXPECT(nn_gpt_preset("gpt-175b", &cfg) == 0);
    nn_gpt_account(&cfg, p.micro_batch, prec, &tot);
    double P = (double)tot.params, nl = cfg.layers + 2;
    double compute = (tot.flops_fwd + tot.flops_bwd) / p.gpu_flops;

    for (int g = 0; g < 2; g++) {
        const struct zero_paper_row *row = r + g * ZERO_MODEL_NMODES, *d = &row[ZERO_MODEL_DISDP];
        double Bps = (g ? 200 : 100) * 1e9 / 8;
        for (int m = 0; m < ZERO_MODEL_NMODES; m++) {
            EXPECT(row[m].mode == (enum zero_model_mode)m);
            EXPECT(row[m].link_gbps == (g ? 200 : 100));
            EXPECT(REL(row[m].over_disdp, row[m].model.step / d->model.step));
            EXPECT(REL(row[m].model.compute, compute));
            EXPECT(row[m].model.step >= row[m].model.compute);
            if (m != ZERO_MODEL_DISDP) {
                /* 2 AG + RS of the padded shards: 3 * 2 B * S * (W-1) per layer. */
                double pad = (double)row[m].bytes.send - 6.0 * 7 / 8 * P;
                EXPECT(pad >= 0 && pad < 42 * nl);
                EXPECT(row[m].bytes.send == row[m].bytes.recv);
                EXPECT(REL(row[m].model.wire, (double)row[m].bytes.send / Bps));
            }
        }
        EXPECT(d->over_disdp == 1);
        EXPECT(d->bytes.send == (uint64_t)(2 * P) && d->bytes.recv == (uint64_t)(4 * P));
        EXPECT(REL(d->model.wire, (double)d->bytes.recv / Bps));
        EXPECT(row[ZERO_MODEL_SERIAL].model.step >= row[ZERO_MODEL_OVERLAP].model.step);
    }
    for (int m = 0; m < ZERO_MODEL_NMODES; m++)
        EXPECT(REL(r[ZERO_MODEL_NMODES + m].model.wire, r[m].model.wire / 2));
    EXPECT(ZERO_PAPER_SPEEDUP == 3.98);

    p.micro_batch = 0;
    EXPECT(zero_paper_table(&p, r, err, sizeof err) == -1 && strstr(err, "micro_batch"));
    zero_paper_inputs_default(&p);
    p.gpu_flops = NAN;
    EXPECT(zero_paper_table(&p, r, err, sizeof err) == -1 && strstr(err, "gemm_flops"));
    return TEST_EXIT();
}
