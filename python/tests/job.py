"""A job the tests run under `libra launch ... -- python3 job.py MODE`: every
node runs this file; each worker checks what it pulls against numpy and
prints "PASS MODE" (a failed check raises, and the node exits non-zero)."""
import json
import os
import sys

import numpy as np

import libra

MODE = sys.argv[1]
DIM = 3
LR = 0.5
ROUNDS = 4
SYNC = MODE in ("sync", "adagrad", "torch_sync")
OPTIMIZER = "adagrad" if MODE == "adagrad" else "sgd"


def shared_keys():
    """Keys every worker pushes: each server range's edges and middle."""
    keys = []
    for begin, end in libra.server_key_ranges():
        keys += [begin, begin + 1, begin + (end - begin) // 2, end - 1]
    return np.unique(np.array(keys, dtype=np.uint64))


def own_keys(rank):
    """Keys only worker `rank` pushes."""
    keys = [begin + 1000 + 7 * rank for begin, _ in libra.server_key_ranges()]
    return np.array(keys, dtype=np.uint64)


def gradient(rank, rnd, keys):
    """Multiples of 1/8: exact in float32 and in the switch's fixed point."""
    base = ((rank + 1) * (keys % np.uint64(5) + np.uint64(1))).astype(np.float32) + rnd
    return (base[:, None] + np.arange(DIM, dtype=np.float32)[None, :]) / np.float32(8)


def keys_of(rank):
    return np.union1d(shared_keys(), own_keys(rank)).astype(np.uint64)


def summed_gradient(rnd, keys, workers):
    """Per key of `keys`: the sum over workers of round `rnd`'s gradients."""
    total = np.zeros((len(keys), DIM), dtype=np.float32)
    for w in range(workers):
        mine = keys_of(w)
        idx = np.searchsorted(keys, mine)
        total[idx] += gradient(w, rnd, mine)
    return total


def check(got, want, what):
    got = np.asarray(got, dtype=np.float32).reshape(want.shape)
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        bad = np.argwhere(~np.isclose(got, want, rtol=1e-5, atol=1e-6))[:5]
        raise AssertionError(f"{what}: mismatch at {bad.tolist()}: got "
                             f"{[float(got[tuple(i)]) for i in bad]} want "
                             f"{[float(want[tuple(i)]) for i in bad]}")


def run_async(kv, rank, workers):
    """SGD applied per push: w = -lr * (sum of every gradient pushed)."""
    everything = np.unique(np.concatenate([keys_of(w) for w in range(workers)]))
    want = np.zeros((len(everything), DIM), dtype=np.float32)
    mine = keys_of(rank)
    for rnd in range(ROUNDS):
        grad = gradient(rank, rnd, mine)
        kv.wait(kv.push(mine, grad))  # a 2-D float32 array: sent as is
        libra.barrier("workers")
        want -= LR * summed_gradient(rnd, everything, workers)
        check(kv.wait(kv.pull(everything)), want, f"round {rnd}: pull")
        out = np.empty(len(everything) * DIM, dtype=np.float32)
        lens = np.zeros(len(everything), dtype=np.int32)
        got = kv.wait(kv.pull(everything, out=out, lens=lens))
        assert got is out, "pull into out returns out"
        assert (lens == DIM).all(), lens
        check(out, want, f"round {rnd}: pull into out")
        libra.barrier("workers")  # nobody pushes the next round before all have pulled


def run_sync(kv, rank, workers, torch_arrays=False):
    """BSP: one step per key per round with the workers' mean gradient,
    answered to push_pull once the round is applied."""
    mine = keys_of(rank)
    everything = np.unique(np.concatenate([keys_of(w) for w in range(workers)]))
    w = np.zeros((len(everything), DIM), dtype=np.float32)
    acc = np.full_like(w, 1e-6)
    idx = np.searchsorted(everything, mine)
    for rnd in range(ROUNDS):
        g = summed_gradient(rnd, everything, workers) / np.float32(workers)
        if OPTIMIZER == "adagrad":
            acc += g * g
            w -= np.float32(LR) * g / np.sqrt(acc)
        else:
            w -= np.float32(LR) * g
        grad = gradient(rank, rnd, mine)
        if torch_arrays:
            import torch
            out = torch.empty(grad.size)
            got = kv.wait(kv.push_pull(torch.from_numpy(mine.view(np.int64)),
                                       torch.from_numpy(grad).requires_grad_(), out=out))
            got = out.numpy()
        else:
            got = kv.wait(kv.push_pull(mine, grad))
        check(got, w[idx], f"round {rnd}: push_pull")
    check(kv.wait(kv.pull(everything)), w, "final pull")


def run_errors(kv):
    """Bad arguments raise before anything is sent; the job goes on."""
    keys = np.array([3, 7, 11], dtype=np.uint64)

    def expect(error, fragment, call):
        try:
            call()
        except error as e:
            assert fragment in str(e), f"{error.__name__} says {e!r}, not {fragment!r}"
            return
        raise AssertionError(f"no {error.__name__} ({fragment})")

    expect(TypeError, "float32, got float64", lambda: kv.push(keys, np.ones(3)))
    expect(TypeError, "integers", lambda: kv.push(np.ones(3, dtype=np.float32),
                                                   np.ones(3, dtype=np.float32)))
    expect(ValueError, "sorted ascending and unique",
           lambda: kv.push(keys[::-1].copy(), np.ones(3, dtype=np.float32)))
    expect(ValueError, "non-negative", lambda: kv.pull(np.array([-1, 2])))
    expect(ValueError, "do not divide", lambda: kv.push(keys, np.ones(4, dtype=np.float32)))
    expect(ValueError, "lens sum to", lambda: kv.push(keys, np.ones(6, dtype=np.float32),
                                                      lens=[1, 2, 2]))
    expect(ValueError, "1-D", lambda: kv.pull(np.zeros((2, 2), dtype=np.uint64)))
    expect(ValueError, "out has 2 floats", lambda: kv.push_pull(
        keys, np.ones(9, dtype=np.float32), out=np.zeros(2, dtype=np.float32)))
    expect(ValueError, "no request with timestamp 12345", lambda: kv.wait(12345))
    expect(ValueError, "unknown group", lambda: libra.barrier("nobody"))
    # A runtime error (ps::Error) becomes libra.Error with the runtime's message.
    expect(libra.Error, "already exists", lambda: libra.KVWorker(0, 0))
    # A pull into an `out` of the wrong size fails in wait, naming both sizes.
    ts = kv.pull(keys, out=np.zeros(2, dtype=np.float32))
    expect(ValueError, "servers answered 9", lambda: kv.wait(ts))
    # Lists are converted; lens may be given; the job still works.
    kv.wait(kv.push([3, 7, 11], [1.0] * 9, lens=[3, 3, 3]))
    check(kv.wait(kv.pull(keys)), np.full((3, DIM), -LR, dtype=np.float32), "after the errors")
    # A push of the wrong length per key is refused by the server (logged) and
    # answered with NaN, not applied.
    got = kv.wait(kv.push_pull(keys, np.ones(6, dtype=np.float32)))
    assert got.shape == (6,) and np.isnan(got).all(), got
    check(kv.wait(kv.pull(keys)), np.full((3, DIM), -LR, dtype=np.float32), "after a bad push")


def main():
    libra.start()
    if libra.is_server():
        stats = libra.run_server(optimizer=OPTIMIZER, lr=LR, dim=DIM, sync=SYNC)
        print("SERVER " + json.dumps(stats), flush=True)
        return
    if libra.is_scheduler():
        libra.finalize()
        return
    rank, workers = libra.rank(), libra.num_workers()
    assert libra.is_worker() and not libra.is_server() and not libra.is_scheduler()
    assert 0 <= rank < workers and libra.num_servers() == int(os.environ["DMLC_NUM_SERVER"])
    kv = libra.KVWorker(sync=SYNC)
    if MODE == "async":
        run_async(kv, rank, workers)
    elif MODE in ("sync", "adagrad"):
        run_sync(kv, rank, workers)
    elif MODE == "torch_sync":
        run_sync(kv, rank, workers, torch_arrays=True)
    elif MODE == "errors":
        run_errors(kv)
    else:
        raise SystemExit(f"unknown mode {MODE}")
    assert kv.outstanding == 0
    print(f"PASS {MODE}", flush=True)
    libra.finalize()


if __name__ == "__main__":
    main()
