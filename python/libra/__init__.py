"""Libra's PS-lite-compatible parameter server for Python (docs/python.md).

A program runs as every node of a job; `libra launch -s M -w N -- python3
prog.py` starts them (or set DMLC_ROLE, DMLC_NUM_WORKER, ... yourself)::

    import numpy as np, libra
    libra.start()
    if libra.is_server():
        libra.run_server(optimizer="sgd", lr=0.1, dim=4)  # serves, then finalizes
    else:
        if libra.is_worker():
            kv = libra.KVWorker()
            keys = np.array([1, 5, 9], dtype=np.uint64)
            kv.wait(kv.push(keys, np.ones(12, dtype=np.float32)))
            weights = kv.wait(kv.pull(keys))              # 12 float32
        libra.finalize()

Arrays: keys uint64 (other non-negative integer arrays are converted),
sorted ascending and unique; values float32 (another dtype raises
TypeError); lens int32, one per key. C-contiguous arrays of these dtypes are
sent without a copy: do not change them until `wait(ts)` has returned. CPU
torch tensors are accepted wherever an array is (their memory is shared);
torch has no uint64, so an int64 key tensor is read as the uint64 keys of the
same bits (sorted by that unsigned value).
"""

import sys as _sys

from ._libra import (  # noqa: F401
    MAX_KEY,
    Error,
    barrier,
    finalize,
    is_scheduler,
    is_server,
    is_worker,
    num_servers,
    num_workers,
    rank,
    job_plan,
    mix_keys,
    read_dataset,
    server_key_ranges,
    start,
    unique_keys,
)
from . import _libra

__all__ = [
    "MAX_KEY", "Error", "KVServer", "KVWorker", "barrier", "finalize", "is_scheduler",
    "is_server", "is_worker", "num_servers", "num_workers", "rank", "run_server",
    "server_key_ranges", "start", "read_dataset", "mix_keys", "unique_keys", "job_plan",
]


def _array(x, what):
    """A numpy view of a CPU torch tensor (sharing its memory); x otherwise."""
    torch = _sys.modules.get("torch")  # only if the program imported torch
    if torch is not None and isinstance(x, torch.Tensor):
        if x.device.type != "cpu":
            raise TypeError(f"{what} is a torch tensor on {x.device}; only CPU tensors "
                            "can be sent (call .cpu() first)")
        x = x.detach().numpy()
        if what == "keys" and x.dtype == "int64":
            x = x.view("uint64")  # torch has no uint64: int64 keys are read by their bits
    return x


class KVWorker:
    """A worker's key-value client (PS-lite's KVWorker<float>).

    push, pull and push_pull return a timestamp at once; wait(ts) blocks
    until that request has completed and returns the pulled values (None for
    a push). Every request must be waited for: until then the module keeps
    references to its arrays.

    sync=True sends every push to every server (an empty one where the keys
    miss a server), as the synchronous servers of run_server(sync=True)
    need to count one push per worker per iteration.

    The KVWorker of app 0, customer 0 is the one Libra's hot path serves when
    the job runs with a switch (libra launch --local-switch): every push is
    then one epoch, and all workers must push equally often.
    """

    def __init__(self, app_id=0, customer_id=0, sync=False):
        self._kv = _libra._KVWorker(app_id, customer_id, sync)

    def push(self, keys, vals, lens=None):
        """Pushes vals (len(keys) * dim floats, or by lens) for keys; returns a timestamp."""
        return self._kv.push(_array(keys, "keys"), _array(vals, "vals"),
                             None if lens is None else _array(lens, "lens"))

    def pull(self, keys, out=None, lens=None):
        """Pulls the values of keys; wait(ts) returns them (in out, if given).

        Without out the answer becomes a numpy array without a copy when one
        server answers; out (float32, C-contiguous) gets the values copied in.
        lens, if given (int32, one per key), receives each key's length.
        """
        return self._kv.pull(_array(keys, "keys"),
                             None if out is None else _array(out, "out"),
                             None if lens is None else _array(lens, "lens"))

    def push_pull(self, keys, vals, out=None, lens=None):
        """Pushes vals and pulls the updated values in one round trip."""
        return self._kv.push_pull(_array(keys, "keys"), _array(vals, "vals"),
                                  None if out is None else _array(out, "out"),
                                  None if lens is None else _array(lens, "lens"))

    def wait(self, ts):
        """Blocks until request ts has completed; returns its pulled values or None."""
        return self._kv.wait(ts)

    @property
    def outstanding(self):
        """Requests not waited for yet."""
        return self._kv.outstanding


class KVServer:
    """A server whose request handle runs an optimizer in C++ (no Python in the loop).

    optimizer: "sgd", "adagrad" or "ftrl" (src/train/optimizer.h); lr is
    FTRL's alpha; l1 (FTRL), l2, beta (FTRL), initial_accumulator (Adagrad).
    dim: floats per key. Keys start at zero, or uniform in [-init_scale,
    init_scale] from (seed, key). sync=False applies each push when it
    arrives, one step on the gradient it carries (a push the switch summed
    is one step on the sum); sync=True is BSP: one step per key per
    iteration with the mean of all workers' pushes (workers use
    KVWorker(sync=True)). initial_keys (sorted, unique) with initial_values
    (dim floats each) start those keys at the given values instead (how
    libra.torch.serve starts a model's dense parameters). Keep the object
    until finalize().
    """

    def __init__(self, optimizer="sgd", lr=0.1, dim=1, l1=0.0, l2=0.0, beta=1.0,
                 initial_accumulator=1e-6, init_scale=0.0, seed=1, sync=False, app_id=0,
                 initial_keys=None, initial_values=None):
        self._server = _libra._KVServer(
            optimizer, lr, dim, l1, l2, beta, initial_accumulator, init_scale, seed, sync, app_id,
            None if initial_keys is None else _array(initial_keys, "keys"),
            None if initial_values is None else _array(initial_values, "initial_values"))

    def stats(self):
        """Counters: pushes, pulls, switch_pushes, keys_updated, rounds, malformed_pushes,
        parameters."""
        return self._server.stats()

    def values(self, keys):
        """The values this server holds for keys (dim each), as a float32 array."""
        return self._server.values(_array(keys, "keys"))


def run_server(**options):
    """Serves with KVServer(**options) until the job ends, finalizes the node
    and returns the server's stats()."""
    server = KVServer(**options)
    finalize()
    return server.stats()
