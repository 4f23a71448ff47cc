"""libra.torch: PyTorch models whose parameters live on Libra's servers (docs/python.md).

Two pieces, both on the KVWorker of app 0 (the one Libra's hot path serves
when the job runs with a switch):

- `Embedding(dim)`: an `EmbeddingBag`-like lookup for unbounded 64-bit
  feature keys. Its forward pulls the rows of the batch's unique keys; its
  backward pushes their gradients (only those rows, summed per unique key).
  It holds no torch parameters.
- `DenseSync(model, dim)`: the model's torch parameters (everything but the
  embeddings) packed into reserved keys. `pull()` loads them from the
  servers; `step()` pushes their gradients, waits for the embeddings' pushes
  and loads the updated values: one BSP iteration, as `libra train` runs one.

The servers run the same program and call `serve(model, dim, ...)`, which
starts a synchronous optimizer server (libra.KVServer) whose dense keys start
at the values the model's own initialisation gave them::

    libra.start()
    torch.manual_seed(0)
    model = MyModel()                      # holds libra.torch.Embedding(s)
    if libra.is_server():
        libra.torch.serve(model, dim=9, optimizer="adagrad", lr=0.05)
    elif libra.is_worker():
        sync = libra.torch.DenseSync(model, dim=9)
        sync.pull()
        for batch in batches:
            loss = model(batch).mean()
            loss.backward()                # the embeddings push their rows
            sync.step()                    # dense gradients, wait, new values
        libra.finalize()
    else:
        libra.finalize()
"""
import numpy as _np
import torch

import libra
from . import _libra

__all__ = ["DenseSync", "Embedding", "bag_sums", "serve", "shared_worker"]

_WORKERS = {}


def shared_worker(app_id=0):
    """The synchronous KVWorker that libra.torch's modules of `app_id` share
    (created on first use, after libra.start())."""
    kv = _WORKERS.get(app_id)
    if kv is None:
        kv = _WORKERS[app_id] = libra.KVWorker(app_id=app_id, sync=True)
    return kv


def _release_workers():
    _WORKERS.clear()


def _key_array(keys, what="keys"):
    """A 1-D numpy view of integer keys (a tensor's int64 read as uint64 bits)."""
    if isinstance(keys, torch.Tensor):
        if keys.device.type != "cpu":
            raise TypeError(f"{what} is a torch tensor on {keys.device}; only CPU tensors "
                            "can be sent (call .cpu() first)")
        if keys.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"{what} must be an int64 tensor, got {keys.dtype}")
        keys = keys.detach().numpy()
    elif not isinstance(keys, _np.ndarray):
        raise TypeError(f"{what} must be an integer tensor or numpy array, got "
                        f"{type(keys).__name__}")
    if keys.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers (int64 or uint64), got {keys.dtype}")
    if keys.dtype.kind == "i" and keys.dtype.itemsize < 8:
        keys = keys.astype(_np.int64)
    return keys


class _BagSums(torch.autograd.Function):
    """The fused sparse op (libra._libra.bag_sums, C++): one pass over the
    occurrences forward, one scatter-add into the unique rows backward."""

    @staticmethod
    def forward(ctx, rows, index, lengths, weights, squares):
        ctx.set_materialize_grads(False)
        w = None if weights is None else weights.detach().contiguous()
        rows = rows.detach().contiguous()
        sums, sq = _libra.bag_sums(rows.numpy(), index.numpy(), None if w is None else w.numpy(),
                                   lengths.numpy(), squares)
        ctx.save_for_backward(rows, index, lengths, w)
        sums = torch.from_numpy(sums)
        return sums, (torch.from_numpy(sq) if squares else sums.new_zeros(0, sums.shape[1]))

    @staticmethod
    def backward(ctx, grad_sums, grad_squares):
        rows, index, lengths, w = ctx.saved_tensors
        if grad_sums is None:
            grad_sums = rows.new_zeros(len(lengths), rows.shape[1])
        if grad_squares is not None and grad_squares.numel() == 0:
            grad_squares = None
        weight_grad = w is not None and ctx.needs_input_grad[3]
        grad_rows, grad_w = _libra.bag_sums_backward(
            grad_sums.contiguous().numpy(),
            None if grad_squares is None else grad_squares.contiguous().numpy(), rows.numpy(),
            index.numpy(), None if w is None else w.numpy(), lengths.numpy(), weight_grad)
        return (torch.from_numpy(grad_rows), None, None,
                torch.from_numpy(grad_w) if weight_grad else None, None)


def bag_sums(rows, index, lengths, weights=None, squares=False):
    """Per bag, the (weighted) sum of its rows, in one C++ call with its backward.

    rows: (unique, dim) float32 (Embedding.lookup's); index: int64, every
    occurrence's row; lengths: int64, each bag's number of consecutive
    occurrences (summing to len(index)); weights: float32 per occurrence or
    None (all 1). Returns sums (bags, dim): sums[b] = sum over bag b of
    weights[i] * rows[index[i]]; with squares=True also (bags, dim) sums of
    (weights[i] * rows[index[i]]) ** 2, elementwise: a factorization
    machine's second-order term. Differentiable in rows and weights; the
    backward sums the bags' gradients into one row per unique key (which
    lookup()'s hook then pushes).
    """
    index = torch.as_tensor(index)
    lengths = torch.as_tensor(lengths)
    if index.dtype != torch.int64 or lengths.dtype != torch.int64:
        raise TypeError("index and lengths must be int64 tensors")
    if weights is not None and (not isinstance(weights, torch.Tensor)
                                or weights.dtype != torch.float32):
        raise TypeError("weights must be a float32 tensor")
    sums, sq = _BagSums.apply(rows, index.contiguous(), lengths.contiguous(), weights, squares)
    return (sums, sq) if squares else sums


class Embedding(torch.nn.Module):
    """`torch.nn.EmbeddingBag` over unbounded 64-bit keys, its rows on the servers.

    forward(keys, offsets=None, per_sample_weights=None) follows EmbeddingBag:
    keys 1-D with offsets (bag i is keys[offsets[i]:offsets[i+1]]) or 2-D
    (batch, n) without (each row a bag); returns (bags, dim). An empty bag is
    zeros. Keys are int64 tensors (read as uint64 by their bits) or
    uint64/int64 numpy arrays; with mix_keys (the default) they are mixed as
    `libra train` mixes feature keys, so that any key set spreads over the
    servers' key ranges.

    The forward pulls the batch's unique rows (one round trip); when autograd
    needs them, their gradient (summed per unique key by autograd) is pushed
    during backward, without waiting. `DenseSync.step()` (or `wait()`) waits
    for it. The servers must hold `dim` floats per key.
    """

    def __init__(self, dim, mode="sum", mix_keys=True, app_id=0):
        super().__init__()
        if int(dim) < 1:
            raise ValueError(f"dim must be at least 1, got {dim}")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.dim, self.mode, self.mix_keys, self.app_id = int(dim), mode, mix_keys, app_id
        self._pending = []  # timestamps of pushes not waited for
        self.pushes = 0  # pushes since the last DenseSync.step()

    def extra_repr(self):
        return f"dim={self.dim}, mode={self.mode!r}, mix_keys={self.mix_keys}"

    def _kv(self):
        return shared_worker(self.app_id)

    def wait(self):
        """Waits for this module's pushes."""
        kv = self._kv()
        while self._pending:
            kv.wait(self._pending.pop(0))

    def push_nothing(self):
        """An empty push: a BSP iteration in which this worker had no rows."""
        self._pending.append(self._kv().push(_np.zeros(0, _np.uint64),
                                             _np.zeros(0, _np.float32)))
        self.pushes += 1

    def pull_rows(self, keys):
        """(unique keys as sent, their rows (unique, dim) float32 tensor, index of every key)."""
        flat = _key_array(keys).reshape(-1)
        unique, inverse = _libra.unique_keys(flat, self.mix_keys)
        kv = self._kv()
        self.wait()  # our own pushes first, so the pull sees them
        if len(unique) == 0:
            return unique, torch.zeros(0, self.dim), torch.from_numpy(inverse)
        values = kv.wait(kv.pull(unique))
        if values.size != len(unique) * self.dim:
            raise ValueError(f"the servers answered {values.size // len(unique)} floats per key; "
                             f"this Embedding has dim {self.dim} (serve(..., dim=) must agree)")
        return unique, torch.from_numpy(values).view(len(unique), self.dim), \
            torch.from_numpy(inverse)

    def lookup(self, keys):
        """(rows, index): the rows of the unique keys, (unique, dim), and every key's
        row (int64, keys' shape flattened), so that rows[index] are the keys' rows.

        The primitive forward() builds on, for models that combine the rows
        otherwise: when autograd is on, the gradient that reaches `rows` is
        pushed during backward like forward()'s."""
        unique, rows, index = self.pull_rows(keys)
        if torch.is_grad_enabled() and len(unique) > 0:
            rows.requires_grad_()
            rows.register_hook(self._pusher(unique))
        return rows, index

    def forward(self, keys, offsets=None, per_sample_weights=None):
        keys = _key_array(keys)
        shape = tuple(keys.shape)
        if len(shape) == 2:
            if offsets is not None:
                raise ValueError("offsets must be None when keys are 2-D (each row is a bag)")
        elif len(shape) == 1:
            if offsets is None:
                raise ValueError("1-D keys need offsets (where each bag begins)")
            offsets = torch.as_tensor(offsets)
            if offsets.dim() != 1 or offsets.dtype not in (torch.int64, torch.int32):
                raise TypeError("offsets must be a 1-D int64 tensor")
            offsets = offsets.to(torch.int64)
            if len(offsets) > 0 and (int(offsets[0]) != 0 or int(offsets[-1]) > shape[0]
                                     or bool((offsets[1:] < offsets[:-1]).any())):
                raise ValueError(f"offsets must start at 0, not decrease and stay <= "
                                 f"{shape[0]} (the number of keys)")
        else:
            raise ValueError(f"keys must be 1-D (with offsets) or 2-D, got shape {shape}")
        if per_sample_weights is not None:
            if not isinstance(per_sample_weights, torch.Tensor):
                per_sample_weights = torch.as_tensor(per_sample_weights)
            if per_sample_weights.dtype != torch.float32:
                raise TypeError(f"per_sample_weights must be float32, got "
                                f"{per_sample_weights.dtype}")
            if tuple(per_sample_weights.shape) != shape:
                raise ValueError(f"per_sample_weights has shape "
                                 f"{tuple(per_sample_weights.shape)}, keys {shape}")
            if self.mode != "sum":
                raise ValueError("per_sample_weights need mode='sum' (as in EmbeddingBag)")
        rows, index = self.lookup(keys)
        if self.mode == "sum":  # the fused C++ op (bag_sums)
            if len(shape) == 2:
                lengths = torch.full((shape[0],), shape[1], dtype=torch.int64)
            else:
                lengths = torch.diff(offsets, append=torch.tensor([shape[0]]))
            weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
            return bag_sums(rows, index, lengths, weights)
        index = index.view(shape)
        if len(shape) == 2:
            # Fixed-size bags; also the fast path for one key per bag.
            return torch.nn.functional.embedding_bag(index, rows, None, mode=self.mode,
                                                     per_sample_weights=per_sample_weights)
        return torch.nn.functional.embedding_bag(index, rows, offsets, mode=self.mode,
                                                 per_sample_weights=per_sample_weights)

    def _pusher(self, unique):
        def push(grad):
            # Only the rows this batch used, one gradient row per unique key.
            g = grad.detach().contiguous()
            self._pending.append(self._kv().push(unique, g))
            self.pushes += 1
            return grad
        return push


class DenseSync:
    """The torch parameters of `model` (all but its libra Embeddings) on the servers, BSP.

    They are packed in order, `dim` floats per key, into `libra train`'s
    dense keys (libra._libra.dense_key(first_index + i)). pull() loads them;
    step() fills in an empty push for each Embedding of the model that did
    not push since the last step (so that every worker pushes equally often,
    as BSP and the hot path need), pushes the parameters' gradients (zeros
    where a parameter has none), waits for the embeddings' pushes, loads the
    values the servers hold after the iteration and clears the gradients.
    """

    def __init__(self, model, dim, first_index=0, app_id=0):
        self.dim, self.app_id = int(dim), app_id
        self.embeddings = [m for m in model.modules() if isinstance(m, Embedding)]
        self.params = [p for p in model.parameters() if p.requires_grad]
        for p in self.params:
            if p.dtype != torch.float32:
                raise TypeError(f"DenseSync keeps float32 parameters, got {p.dtype}")
        self.size = sum(p.numel() for p in self.params)
        self.num_keys = -(-self.size // self.dim)
        keys = _np.array([_libra.dense_key(first_index + i) for i in range(self.num_keys)],
                         dtype=_np.uint64)
        self._order = _np.argsort(keys)  # sorted position -> dense key index
        self.keys = keys[self._order]
        self._buffer = _np.zeros((self.num_keys, self.dim), dtype=_np.float32)

    def _pack(self, tensors):
        flat = self._buffer.reshape(-1)
        flat[:] = 0
        at = 0
        for p, t in zip(self.params, tensors):
            n = p.numel()
            if t is not None:
                flat[at:at + n] = t.detach().reshape(-1).numpy()
            at += n
        return _np.ascontiguousarray(self._buffer[self._order])

    def _load(self, values):
        table = _np.empty_like(self._buffer)
        table[self._order] = values.reshape(self.num_keys, self.dim)
        flat = torch.from_numpy(table.reshape(-1))
        at = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                p.copy_(flat[at:at + n].view_as(p))
                at += n

    def initial_values(self):
        """(keys, values) of the parameters as they are now: the servers' start."""
        return self.keys, self._pack(list(self.params))

    def pull(self):
        """Loads the parameters from the servers."""
        if self.num_keys == 0:
            return
        kv = shared_worker(self.app_id)
        self._load(kv.wait(kv.pull(self.keys)))

    def step(self):
        """Ends this worker's iteration (see the class); blocks until the servers applied it."""
        kv = shared_worker(self.app_id)
        for e in self.embeddings:
            if e.pushes == 0:
                e.push_nothing()
        ts = None
        if self.num_keys > 0:
            ts = kv.push_pull(self.keys, self._pack([p.grad for p in self.params]))
        for e in self.embeddings:
            e.wait()
            e.pushes = 0
        if ts is not None:
            self._load(kv.wait(ts))
        for p in self.params:
            p.grad = None


def serve(model, dim, optimizer="adagrad", lr=0.05, init_scale=0.01, sync=True, **options):
    """Runs a server node for `model`: a libra.KVServer holding `dim` floats per
    key (embedding rows start uniform in [-init_scale, init_scale], the dense
    keys at the model's current parameters), serving until the job ends; then
    finalizes the node and returns the server's stats()."""
    keys, values = DenseSync(model, dim).initial_values()
    server = libra.KVServer(optimizer=optimizer, lr=lr, dim=dim, init_scale=init_scale,
                            sync=sync, initial_keys=keys if len(keys) else None,
                            initial_values=values if len(keys) else None, **options)
    libra.finalize()
    return server.stats()
