#!/usr/bin/env python3
"""DeepSpeed ZeRO-Infinity on the CPU at mb-ratel's shape: ZeRO stage 3 with
parameters and optimizer states offloaded to NVMe (a folder), a GPT of
LAYERS pre-LN blocks, fp32 (the CPU accelerator), Adam; prints one line
"deepspeed-zero-infinity tokens_per_s=... steps=... shape=... batch=...".
Run by deepspeed_peer.sh in its venv (DS_ACCELERATOR=cpu)."""
import argparse
import os
import tempfile
import time

import deepspeed
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, layers, hidden, heads, seq, vocab):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, hidden), nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(hidden), nn.Linear(hidden, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1), persistent=False)

    def forward(self, ids, targets):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for b in self.blocks:
            x = b(x, self.mask)
        logits = self.head(self.ln(x))
        return nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", required=True, help="layers=,hidden=,heads=,seq=,vocab=")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--nvme", required=True, help="the offload folder")
    ap.add_argument("--steps", type=int, default=3, help="timed steps (after one warm-up)")
    a = ap.parse_args()
    cfg = dict(kv.split("=") for kv in a.shape.split(","))
    L, H, N, S, V = (int(cfg[k]) for k in ("layers", "hidden", "heads", "seq", "vocab"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    nvme = tempfile.mkdtemp(prefix="zi.", dir=a.nvme)
    ds = {
        "train_micro_batch_size_per_gpu": a.batch,
        "optimizer": {"type": "Adam", "params": {"lr": 1e-4}},
        "zero_optimization": {
            "stage": 3,
            "offload_param": {"device": "nvme", "nvme_path": nvme},
            "offload_optimizer": {"device": "nvme", "nvme_path": nvme},
        },
    }
    torch.manual_seed(1)
    with deepspeed.zero.Init(config_dict_or_path=ds):
        model = GPT(L, H, N, S, V)
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds)
    g = torch.Generator().manual_seed(2)
    elapsed = 0.0
    for step in range(a.steps + 1):
        ids = torch.randint(0, V, (a.batch, S), generator=g)
        tgt = torch.randint(0, V, (a.batch, S), generator=g)
        t0 = time.perf_counter()
        loss = engine(ids, tgt)
        engine.backward(loss)
        engine.step()
        if step:  # the first step warms up
            elapsed += time.perf_counter() - t0
    if not torch.isfinite(loss):
        raise SystemExit(f"loss is {loss.item()} after {a.steps + 1} steps")
    print(f"deepspeed-zero-infinity tokens_per_s={a.steps * a.batch * S / elapsed:.1f} steps={a.steps} "
          f"shape={a.shape} batch={a.batch} loss={loss.item():.4f}")


if __name__ == "__main__":
    main()
