/* zero/closed_form.c: bytes per worker per direction, against values
 * computed by hand (in the comments), padding included; a gpt-tiny block
 * through nn_gpt_layer_account; bad arguments refused. */
#include "../../nn/nn.h"
#include "../../zero/zero.h"
#include "check.h"

/* zero_closed_form_layer succeeds and moves send bytes out, recv in. */
static int layer_moves(enum zero_model_mode mode, size_t numel, int W, int micro, size_t pbytes, size_t gbytes,
                       uint64_t send, uint64_t recv)
{
    struct zero_wire_bytes b;
    if (zero_closed_form_layer(mode, numel, W, micro, pbytes, gbytes, &b) != 0)
        return 0;
    if (b.send != send || b.recv != recv)
        fprintf(stderr, "numel %zu over %d: %llu out, %llu in\n", numel, W, (unsigned long long)b.send,
                (unsigned long long)b.recv);
    return b.send == send && b.recv == recv;
}

int main(void)
{
    struct zero_wire_bytes b;
    /* 12 elements over W=4, bf16 both ways: S = 3, 3 blocks each way of
     * 3 elements for each of 3 collectives: 3*3*3*2 = 54 = 3S(W-1)/W of
     * the 24-byte model. */
    EXPECT(layer_moves(ZERO_MODEL_SERIAL, 12, 4, 1, 2, 2, 54, 54));
    /* 13 over 4: padded to 16, S = 4: 3 blocks * 4 elements * 3 colls * 2 B = 72. */
    EXPECT(layer_moves(ZERO_MODEL_OVERLAP, 13, 4, 1, 2, 2, 72, 72));
    EXPECT(layer_moves(ZERO_MODEL_OFFLOAD, 13, 4, 1, 2, 2, 72, 72));
    /* int8 gathers, fp32 reduce-scatter, 10 over 3: S = 4; 2 blocks *
     * (4*1 + 4*1 + 4*4) = 48. */
    EXPECT(layer_moves(ZERO_MODEL_SERIAL, 10, 3, 1, 1, 4, 48, 48));
    /* One worker moves nothing in ZeRO-3. */
    EXPECT(layer_moves(ZERO_MODEL_SERIAL, 1000, 1, 1, 2, 2, 0, 0));
    /* DisDP: push S once, pull 2S, whatever W and no padding: 13 * 2 = 26
     * out, 52 in; 10 params int8, grads fp32: 40 out, 20 in. */
    EXPECT(layer_moves(ZERO_MODEL_DISDP, 13, 4, 1, 2, 2, 26, 52));
    EXPECT(layer_moves(ZERO_MODEL_DISDP, 10, 1, 1, 1, 4, 40, 20));

    /* Sums over layers: 12 and 13 over 4 in bf16: 54 + 72 = 126. */
    size_t numel[2] = {12, 13};
    EXPECT(zero_closed_form(ZERO_MODEL_SERIAL, numel, 2, 4, 1, 2, 2, &b) == 0);
    EXPECT(b.send == 126 && b.recv == 126);
    EXPECT(zero_closed_form(ZERO_MODEL_DISDP, numel, 2, 4, 1, 2, 2, &b) == 0);
    EXPECT(b.send == 50 && b.recv == 100);

    /* A gpt-tiny block: 12h^2 + 13h = 12*1024 + 416 = 12704 parameters;
     * over W = 3: 12704 = 3*4234 + 2, so S = 4235 and 2 blocks * 4235 *
     * 3 colls * 2 B = 50820 each way. */
    struct nn_gpt_config cfg;
    struct nn_layer_account acc;
    struct nn_precision prec = {NN_BF16, NN_BF16, NN_BF16};
    EXPECT(nn_gpt_preset("gpt-tiny", &cfg) == 0);
    nn_gpt_layer_account(&cfg, 1, prec, 1, &acc);
    EXPECT(acc.params == 12704);
    EXPECT(layer_moves(ZERO_MODEL_SERIAL, acc.params, 3, 1, 2, 2, 50820, 50820));

    /* Two micro-batches per worker: 4 gathers and 1 reduce-scatter per
     * layer: 12 over 4 in bf16: 3 blocks * 3 elements * (4*2 + 2) B = 90;
     * DisDP pulls 4 times: 13 * 2 out, 4 * 13 * 2 = 104 in. */
    EXPECT(layer_moves(ZERO_MODEL_OVERLAP, 12, 4, 2, 2, 2, 90, 90));
    EXPECT(layer_moves(ZERO_MODEL_DISDP, 13, 4, 2, 2, 2, 26, 104));

    /* Refusals. */
    EXPECT(zero_closed_form_layer(ZERO_MODEL_SERIAL, 12, 4, 0, 2, 2, &b) == -1);
    EXPECT(zero_closed_form_layer(ZERO_MODEL_SERIAL, 12, 0, 1, 2, 2, &b) == -1);
    EXPECT(zero_closed_form_layer(ZERO_MODEL_SERIAL, 12, 4, 1, 0, 2, &b) == -1);
    EXPECT(zero_closed_form_layer(ZERO_MODEL_DISDP, 12, 4, 1, 2, 0, &b) == -1);
    EXPECT(zero_closed_form_layer((enum zero_model_mode)9, 12, 4, 1, 2, 2, &b) == -1);
    EXPECT(zero_closed_form(ZERO_MODEL_SERIAL, NULL, 2, 4, 1, 2, 2, &b) == -1);

    enum zero_model_mode m;
    EXPECT(zero_model_mode_parse("disdp", &m) == 0 && m == ZERO_MODEL_DISDP);
    EXPECT(zero_model_mode_parse("zero3-overlap", &m) == 0 && m == ZERO_MODEL_OVERLAP);
    EXPECT(zero_model_mode_parse("zero3", &m) == -1);
    EXPECT(zero_model_mode_parse(NULL, &m) == -1);
    return TEST_EXIT();
}
