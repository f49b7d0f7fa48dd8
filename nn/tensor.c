/* Tensors: shape, storage dtype, host or CUDA device, owning or view. */
#include "nn.h"
#include "../common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t nn_dtype_size(enum nn_dtype t) { return t == NN_F16 || t == NN_BF16 ? 2 : 4; }

const char *nn_dtype_name(enum nn_dtype t)
{
    static const char *const n[] = {"fp32", "fp16", "bf16", "int32"};
    return (unsigned)t < 4 ? n[t] : "?";
}

int nn_dtype_parse(const char *s, enum nn_dtype *out)
{
    if (!strcmp(s, "fp32") || !strcmp(s, "f32")) *out = NN_F32;
    else if (!strcmp(s, "fp16") || !strcmp(s, "f16")) *out = NN_F16;
    else if (!strcmp(s, "bf16")) *out = NN_BF16;
    else return -1;
    return 0;
}

static void set_shape(struct nn_tensor *t, int ndim, const size_t *shape)
{
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->numel *= shape[i];
    }
}

int nn_tensor_alloc(struct nn_tensor *t, enum nn_dtype dtype, enum nn_device dev, int ndim,
                    const size_t *shape, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    if (ndim < 1 || ndim > NN_MAX_DIMS) {
        snprintf(err, errlen, "tensor: %d dimensions (1 to %d)", ndim, NN_MAX_DIMS);
        return -1;
    }
    set_shape(t, ndim, shape);
    t->dtype = dtype;
    t->device = dev;
    t->owner = 1;
    size_t bytes = t->numel * nn_dtype_size(dtype);
    if (dev == NN_CUDA) {
        struct mb_buf b;
        if (mb_buf_alloc(&b, MB_MEM_DEVICE, bytes ? bytes : 1, 0, MPI_COMM_SELF, err, errlen) != 0)
            return -1;
        t->data = b.ptr;
        return 0;
    }
    size_t rounded = (bytes + 63) / 64 * 64;
    t->data = aligned_alloc(64, rounded ? rounded : 64);
    if (!t->data) {
        snprintf(err, errlen, "tensor: out of memory for %zu bytes", bytes);
        return -1;
    }
    memset(t->data, 0, rounded);
    return 0;
}

struct nn_tensor nn_tensor_view(void *data, enum nn_dtype dtype, enum nn_device dev, int ndim,
                                const size_t *shape)
{
    struct nn_tensor t;
    memset(&t, 0, sizeof(t));
    set_shape(&t, ndim, shape);
    t.data = data;
    t.dtype = dtype;
    t.device = dev;
    return t;
}

struct nn_tensor nn_tensor_slice(const struct nn_tensor *t, size_t off, size_t n)
{
    return nn_tensor_view((char *)t->data + off * nn_dtype_size(t->dtype), t->dtype, t->device, 1,
                          &n);
}

void nn_tensor_free(struct nn_tensor *t)
{
    if (t->owner && t->data) {
        if (t->device == NN_CUDA) {
            struct mb_buf b = {.ptr = t->data, .kind = MB_MEM_DEVICE};
            mb_buf_free(&b);
        } else {
            free(t->data);
        }
    }
    memset(t, 0, sizeof(*t));
}

size_t nn_tensor_bytes(const struct nn_tensor *t) { return t->numel * nn_dtype_size(t->dtype); }

int nn_tensor_copy(struct nn_tensor *dst, const struct nn_tensor *src)
{
    if (dst->numel != src->numel)
        return -1;
    size_t n = src->numel;
    if (dst->dtype == src->dtype || (dst->dtype == NN_I32) != (src->dtype == NN_I32)) {
        if (dst->dtype != src->dtype)
            return -1;
        return mb_buf_copy(dst->data, dst->device == NN_CUDA ? MB_MEM_DEVICE : MB_MEM_HOST,
                           src->data, src->device == NN_CUDA ? MB_MEM_DEVICE : MB_MEM_HOST,
                           nn_tensor_bytes(src));
    }
    /* dtype conversion goes through host fp32 */
    float *tmp = malloc((n ? n : 1) * sizeof(float));
    void *stage = NULL;
    int rc = 0;
    if (!tmp)
        return -1;
    const void *s = src->data;
    if (src->device == NN_CUDA) {
        stage = malloc(nn_tensor_bytes(src) + 1);
        rc = stage ? mb_buf_copy(stage, MB_MEM_HOST, src->data, MB_MEM_DEVICE, nn_tensor_bytes(src)) : -1;
        s = stage;
    }
    if (rc == 0) {
        nn_load_f32(tmp, s, src->dtype, n);
        if (dst->device == NN_CUDA) {
            void *out = malloc(nn_tensor_bytes(dst) + 1);
            rc = -1;
            if (out) {
                nn_store_f32(out, dst->dtype, tmp, n);
                rc = mb_buf_copy(dst->data, MB_MEM_DEVICE, out, MB_MEM_HOST, nn_tensor_bytes(dst));
                free(out);
            }
        } else {
            nn_store_f32(dst->data, dst->dtype, tmp, n);
        }
    }
    free(stage);
    free(tmp);
    return rc;
}
