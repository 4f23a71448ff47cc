"""A job the libra.torch tests run under `libra launch ... -- python3 torch_job.py MODE`:
every node runs this file; each worker checks libra.torch against a dense
PyTorch reference and prints "PASS MODE" (a failed check raises, and the
node exits non-zero).

grad: one worker, an asynchronous SGD server with lr 1, so that a row's
  change is exactly minus the gradient its push carried; Embedding's output
  and gradients against torch.nn.EmbeddingBag with the same weights.
bsp:  several workers and servers, libra.torch.serve + DenseSync (BSP SGD):
  after each iteration every row and dense parameter is its old value minus
  lr times the mean over workers of what each worker's reference computes;
  one worker sits out the second iteration (its pushes are empty).
"""
import sys

import numpy as np
import torch

import libra
import libra.torch

MODE = sys.argv[1]
SWITCH = len(sys.argv) > 2 and sys.argv[2] == "switch"
DIM = 4
LR = 0.5


def check(got, want, what, tol):
    got, want = torch.as_tensor(got).reshape(want.shape), torch.as_tensor(want)
    if not torch.allclose(got, want, rtol=tol, atol=tol):
        worst = float((got - want).abs().max())
        raise AssertionError(f"{what}: differs from the reference by up to {worst}")


def wide_keys(rng, pool, n):
    """n keys drawn with repeats from `pool` keys spread over all 64 bits."""
    return rng.choice(pool, size=n).astype(np.uint64)


def run_grad():
    rng = np.random.default_rng(5)
    pool = rng.integers(0, 2**64, size=40, dtype=np.uint64)
    pool[:3] = [0, 2**63, 2**64 - 1]  # the ends of the key space
    cases = [("sum", 1, True), ("mean", 1, False), ("max", 1, False), ("sum", 2, False),
             ("mean", 2, False)]
    for mode, ndim, weighted in cases:
        emb = libra.torch.Embedding(DIM, mode=mode)
        if ndim == 2:
            keys = torch.from_numpy(wide_keys(rng, pool, 5 * 3).view(np.int64)).view(5, 3)
            offsets = None
        else:
            keys = torch.from_numpy(wide_keys(rng, pool, 20).view(np.int64))
            offsets = torch.tensor([0, 3, 3, 9, 10, 17], dtype=torch.int64)  # one empty bag
        weights = torch.rand(keys.shape) if weighted else None
        # The reference: an EmbeddingBag over the batch's unique rows as pulled.
        _, rows, index = emb.pull_rows(keys)
        ref = torch.nn.EmbeddingBag.from_pretrained(rows.clone(), freeze=False, mode=mode)
        untouched = wide_keys(rng, rng.integers(0, 2**64, size=5, dtype=np.uint64), 5)
        _, before, _ = emb.pull_rows(untouched)
        out = emb(keys, offsets, weights)
        want = ref(index.view(keys.shape), offsets, per_sample_weights=weights)
        check(out, want, f"{mode} {ndim}-D forward", 1e-6)
        r = torch.randn(out.shape)
        (out * r).sum().backward()
        (want * r).sum().backward()
        emb.wait()
        _, after, _ = emb.pull_rows(keys)
        # SGD, lr 1: the row moved by exactly minus the pushed gradient.
        check(rows - after, ref.weight.grad, f"{mode} {ndim}-D gradient", 1e-5)
        _, again, _ = emb.pull_rows(untouched)
        check(again, before, "rows the batch did not use", 0)
        # Through lookup(), the primitive: the same rows, the same pushes.
        table, idx = emb.lookup(keys)
        check(table, after, "lookup rows", 0)
        (table[idx].sum() * 0).backward()
        emb.wait()
    # A server holding another width: a clear error, not garbage.
    try:
        libra.torch.Embedding(DIM + 1)(torch.zeros(2, 1, dtype=torch.int64))
    except ValueError as e:
        assert "floats per key" in str(e), e
    else:
        raise AssertionError("an Embedding of another dim than the servers' was accepted")


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = libra.torch.Embedding(DIM)
        self.out = torch.nn.Linear(DIM, 2)

    def forward(self, keys, offsets):
        return self.out(self.emb(keys, offsets))


def batch_of(rank, it):
    """Worker `rank`'s keys in iteration `it`: some shared, some its own."""
    rng = np.random.default_rng(100 * it + rank)
    shared = np.array([7, 2**63 + 5, 2**64 - 3], dtype=np.uint64)
    own = np.array([1000 + rank, 2**62 + rank], dtype=np.uint64)
    keys = rng.choice(np.concatenate([shared, own]), size=8).astype(np.uint64)
    return torch.from_numpy(keys.view(np.int64)), torch.tensor([0, 2, 5], dtype=torch.int64)


def reference_step(rows_of, dense, workers, it, sits_out):
    """Every worker's gradient from a dense reference; returns (row sums per key, dense sums)."""
    sums, dense_sums = {}, [torch.zeros_like(p) for p in dense.parameters()]
    for w in range(workers):
        if w == sits_out:
            continue
        keys, offsets = batch_of(w, it)
        mixed = libra.mix_keys(keys.numpy())
        table = torch.stack([rows_of[int(k)] for k in mixed]).clone().requires_grad_()
        out = dense(torch.nn.functional.embedding_bag(
            torch.arange(len(mixed)), table, offsets, mode="sum"))
        loss = (out * (w + 1)).sum()
        grads = torch.autograd.grad(loss, [table] + list(dense.parameters()))
        for k, g in zip(mixed, grads[0]):
            sums[int(k)] = sums.get(int(k), 0) + g
        for s, g in zip(dense_sums, grads[1:]):
            s += g
    return sums, dense_sums


def run_bsp(model, rank, workers):
    tol = 2e-3 if SWITCH else 1e-5  # the switch sums in fixed point
    sync = libra.torch.DenseSync(model, dim=DIM)
    sync.pull()
    every = np.unique(np.concatenate([libra.mix_keys(batch_of(w, it)[0].numpy())
                                      for w in range(workers) for it in range(3)]))
    for it in range(3):
        values = model.emb._kv().wait(model.emb._kv().pull(every)).reshape(-1, DIM)
        rows_of = {int(k): torch.from_numpy(v.copy()) for k, v in zip(every, values)}
        dense = torch.nn.Linear(DIM, 2)
        dense.load_state_dict(model.out.state_dict())
        sits_out = workers - 1 if it == 1 else -1
        sums, dense_sums = reference_step(rows_of, dense, workers, it, sits_out)
        if rank != sits_out:
            keys, offsets = batch_of(rank, it)
            (model(keys, offsets) * (rank + 1)).sum().backward()
        sync.step()
        after = model.emb._kv().wait(model.emb._kv().pull(every)).reshape(-1, DIM)
        for k, v in zip(every, after):
            want = rows_of[int(k)] - LR * sums.get(int(k), 0) / workers
            check(v, want, f"iteration {it}: row of key {int(k)}", tol)
        for p, q, s in zip(model.out.parameters(), dense.parameters(), dense_sums):
            check(p.detach(), q.detach() - LR * s / workers, f"iteration {it}: dense", tol)


def main():
    libra.start()
    if MODE == "bsp":
        torch.manual_seed(3)
        model = Tiny()
        if libra.is_server():
            libra.torch.serve(model, dim=DIM, optimizer="sgd", lr=LR, init_scale=0.5)
            return
    elif libra.is_server():
        libra.KVServer(optimizer="sgd", lr=1.0, dim=DIM, init_scale=0.5)
        libra.finalize()
        return
    if libra.is_worker():
        if MODE == "grad":
            run_grad()
        else:
            run_bsp(model, libra.rank(), libra.num_workers())
        print(f"PASS {MODE}", flush=True)
    libra.finalize()


if __name__ == "__main__":
    main()
