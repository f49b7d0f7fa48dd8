#!/usr/bin/env python3
"""The PyTorch peer of mb-nn: the same pre-LN GPT-2 decoder block
(LN, QKV, causal multi-head attention, output projection, residual, LN,
tanh-GELU MLP, residual) at the same shape, thread count and causal mask,
timed forward + backward the way mb-nn times nn/'s block (fresh input and
upstream gradient and zeroed gradients before each iteration, untimed;
the input gradient computed too; median of the timed iterations after the
warm-ups); and torch.optim.Adam(foreach=True) on the same number of fp32
parameters as mb-nn's Adam case (nn_adam_default: lr 1e-3, betas 0.9 and
0.999, eps 1e-8, no weight decay).

    python -m reproduce.nn.peer --batch B --seq S --hidden H --heads A --ffn F
        [--threads T] [-n ITERS] [-w WARMUP] [--adam-elems N] -o OUT.json

--batch 0 skips the block (the Adam case alone).

FLOPs are counted as mb-nn counts them (GEMM and attention multiply-adds x 2:
forward 24 B S H^2 + 4 B S^2 H for F = 4H, backward twice that), so the
GFLOP/s of the two are rates over the same work. Writes OUT.json; exit 77
with the reason when torch is not installed.
"""
import argparse
import json
import statistics
import sys
import time


def block_flops(B, S, H, F):
    # the linear layers (3H + H + F + F of width H) and attention, as nn_gpt_layer_account
    fwd = 2.0 * B * S * H * (3 * H + H + 2 * F) + 4.0 * B * S * S * H
    return 3 * fwd


def build(torch, H, A, F):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(H, eps=1e-5), nn.LayerNorm(H, eps=1e-5)
            self.qkv, self.proj = nn.Linear(H, 3 * H), nn.Linear(H, H)
            self.fc1, self.fc2 = nn.Linear(H, F), nn.Linear(F, H)

        def forward(self, x, mask):
            B, S, _ = x.shape
            D = H // A
            q, k, v = self.qkv(self.ln1(x)).split(H, dim=2)
            q, k, v = (t.view(B, S, A, D).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / D ** 0.5)
            att = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, S, H)
            x1 = x + self.proj(y)
            return x1 + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x1)), approximate="tanh"))

    return Block()


def time_block(torch, a):
    torch.manual_seed(a.seed)
    blk = build(torch, a.hidden, a.heads, a.ffn)
    mask = torch.triu(torch.ones(a.seq, a.seq, dtype=torch.bool), diagonal=1)
    times = []
    for it in range(a.warmup + a.iters):
        x = torch.randn(a.batch, a.seq, a.hidden, requires_grad=True)
        dout = torch.randn(a.batch, a.seq, a.hidden)
        blk.zero_grad(set_to_none=False)
        t0 = time.perf_counter()
        out = blk(x, mask)
        out.backward(dout)
        t1 = time.perf_counter()
        if it >= a.warmup:
            times.append(t1 - t0)
        assert torch.isfinite(x.grad).all() and torch.isfinite(out).all(), "non-finite block output"
    return times


def time_adam(torch, a):
    p = torch.nn.Parameter(torch.randn(a.adam_elems))
    opt = torch.optim.Adam([p], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=True)
    times = []
    for it in range(a.warmup + a.iters):
        p.grad = torch.randn(a.adam_elems) * 0.1
        t0 = time.perf_counter()
        opt.step()
        t1 = time.perf_counter()
        if it >= a.warmup:
            times.append(t1 - t0)
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in (("batch", 4), ("seq", 128), ("hidden", 1024), ("heads", 16), ("ffn", 0)):
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: OMP_NUM_THREADS or all)")
    ap.add_argument("-n", "--iters", type=int, default=5)
    ap.add_argument("-w", "--warmup", type=int, default=1)
    ap.add_argument("--adam-elems", type=int, default=0, help="0: skip the Adam case")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    a.ffn = a.ffn or 4 * a.hidden
    try:
        import torch
    except ImportError as e:
        print(f"SKIP: no PyTorch ({e}); install python3-torch (make deps)", file=sys.stderr)
        return 77
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.set_grad_enabled(True)
    res = {"torch_version": torch.__version__, "threads": torch.get_num_threads(), "batch": a.batch,
           "seq": a.seq, "hidden": a.hidden, "heads": a.heads, "ffn": a.ffn, "iters": a.iters,
           "warmup": a.warmup, "flops": block_flops(a.batch, a.seq, a.hidden, a.ffn)}
    if a.batch > 0:  # --batch 0: the Adam case alone
        bt = time_block(torch, a)
        res["block_t"], res["block_median"] = bt, statistics.median(bt)
        res["block_gflops"] = res["flops"] / res["block_median"] / 1e9
    if a.adam_elems > 0:
        at = time_adam(torch, a)
        res["adam_elems"], res["adam_t"], res["adam_median"] = a.adam_elems, at, statistics.median(at)
        res["adam_bytes"] = 28 * a.adam_elems  # read p, m, v, g; write p, m, v (fp32), as mb-nn counts
        res["adam_gbs"] = res["adam_bytes"] / res["adam_median"] / 1e9
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"torch {res['torch_version']}, {res['threads']} threads:"
          + (f" block {res['block_gflops']:.2f} GFLOP/s" if "block_gflops" in res else "")
          + (f" adam {res['adam_gbs']:.2f} GB/s touched" if "adam_gbs" in res else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
