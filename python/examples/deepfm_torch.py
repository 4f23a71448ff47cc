"""A PyTorch DeepFM whose parameters live on Libra's parameter servers.

    libra gen-data --out ctr.libsvm --rows 200000 --keys 100000 --fields 26 --format libsvm
    libra launch -s 2 -w 2 [--local-switch] -- /usr/bin/python3 python/examples/deepfm_torch.py \\
        --data ctr.libsvm --batch 512 --epochs 1

Every feature key holds 1 + dim floats on the servers (its linear weight and
its embedding); the dense part (bias and MLP) is packed into a few reserved
keys at the top of the key space. Each iteration a worker pulls the rows its
batch touches and the dense keys, runs forward and backward in PyTorch, and
pushes the gradients of exactly those rows. The servers run Adagrad in C++
synchronously (BSP, as `libra train`): each iteration steps with the mean of
the workers' gradients. With `--local-switch` the hot rows are summed by
the switch; nothing here changes. Worker 0 prints the held-out log loss and
AUC (the last --test-fraction of the rows) at the end.
"""
import argparse
import time

import numpy as np
import torch

import libra


def read_libsvm(path):
    """Labels (float32) and one key per field per row (uint64, rows x fields)."""
    labels, rows = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            labels.append(float(parts[0]))
            rows.append([int(p.split(":", 1)[0]) for p in parts[1:]])
    return np.array(labels, dtype=np.float32), np.array(rows, dtype=np.uint64)


class DeepFm:
    """DeepFM as functions of the pulled rows and the dense parameters."""

    def __init__(self, fields, dim, hidden):
        self.fields, self.dim = fields, dim
        sizes = [fields * dim] + hidden + [1]
        self.shapes = [(1,)]  # the global bias
        for a, b in zip(sizes[:-1], sizes[1:]):
            self.shapes += [(b, a), (b,)]
        self.num_dense = sum(int(np.prod(s)) for s in self.shapes)

    def logits(self, rows, index, dense):
        """rows: (keys, 1 + dim); index: (batch, fields) into rows; dense: flat."""
        params, at = [], 0
        for shape in self.shapes:
            n = int(np.prod(shape))
            params.append(dense[at:at + n].view(shape))
            at += n
        e = rows[index]                                   # (batch, fields, 1 + dim)
        w, v = e[..., 0], e[..., 1:]
        linear = params[0] + w.sum(dim=1)
        fm = 0.5 * (v.sum(dim=1).pow(2) - v.pow(2).sum(dim=1)).sum(dim=1)
        h = v.reshape(len(index), -1)
        layers = params[1:]
        for i in range(0, len(layers), 2):
            h = torch.nn.functional.linear(h, layers[i], layers[i + 1])
            if i + 2 < len(layers):
                h = torch.relu(h)
        return linear + fm + h.squeeze(1)


def auc(labels, scores):
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = labels > 0.5
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="libsvm file (libra gen-data)")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--dim", type=int, default=8)
    parser.add_argument("--hidden", default="32,16")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--test-fraction", type=float, default=0.1)
    args = parser.parse_args()
    hidden = [int(h) for h in args.hidden.split(",") if h]
    width = 1 + args.dim  # floats per key

    libra.start()
    if libra.is_server():
        libra.run_server(optimizer="adagrad", lr=args.lr, dim=width, init_scale=0.01, sync=True)
        return
    if libra.is_scheduler():
        libra.finalize()
        return

    labels, keys = read_libsvm(args.data)
    model = DeepFm(keys.shape[1], args.dim, hidden)
    dense_keys = np.arange(libra.MAX_KEY - (model.num_dense + width - 1) // width,
                           libra.MAX_KEY, dtype=np.uint64)
    assert keys.max() < dense_keys[0], "feature keys reach the reserved dense keys"
    n_test = int(len(labels) * args.test_fraction)
    n_train = len(labels) - n_test
    rank, workers = libra.rank(), libra.num_workers()
    # Every worker takes the same number of batches (BSP: all push equally often).
    per_worker = n_train // workers
    mine = slice(rank * per_worker, (rank + 1) * per_worker)
    train_labels, train_keys = labels[mine], keys[mine]
    batches = per_worker // args.batch

    kv = libra.KVWorker(sync=True)

    def pull(batch_keys):
        """The rows of batch_keys (plus the dense keys) as a leaf tensor, and the index."""
        unique, index = np.unique(batch_keys, return_inverse=True)
        all_keys = np.concatenate([unique, dense_keys])
        values = kv.wait(kv.pull(all_keys))
        table = torch.from_numpy(values.reshape(len(all_keys), width))
        rows = table[:len(unique)].clone().requires_grad_()
        dense = table[len(unique):].reshape(-1)[:model.num_dense].clone().requires_grad_()
        return all_keys, rows, dense, torch.from_numpy(index.reshape(batch_keys.shape))

    start = time.time()
    for epoch in range(args.epochs):
        total_loss = 0.0
        for b in range(batches):
            part = slice(b * args.batch, (b + 1) * args.batch)
            all_keys, rows, dense, index = pull(train_keys[part])
            y = torch.from_numpy(train_labels[part])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                model.logits(rows, index, dense), y)
            loss.backward()
            gradient = torch.zeros(len(all_keys), width)
            gradient[:len(rows)] = rows.grad
            gradient[len(rows):].view(-1)[:model.num_dense] = dense.grad
            kv.wait(kv.push(all_keys, gradient))  # only the rows this batch used
            total_loss += float(loss)
            if rank == 0 and (b + 1) % max(1, batches // 5) == 0:
                print(f"epoch {epoch} batch {b + 1}/{batches} train loss "
                      f"{total_loss / (b + 1):.5f} "
                      f"({(b + 1) * args.batch * workers / (time.time() - start):.0f} samples/s)",
                      flush=True)
        start = time.time()

    if rank == 0 and n_test > 0:
        scores, losses = [], 0.0
        for at in range(n_train, len(labels), args.batch):
            part = slice(at, min(at + args.batch, len(labels)))
            with torch.no_grad():
                _, rows, dense, index = pull(keys[part])
                z = model.logits(rows, index, dense)
                y = torch.from_numpy(labels[part])
                losses += float(torch.nn.functional.binary_cross_entropy_with_logits(
                    z, y, reduction="sum"))
                scores.append(torch.sigmoid(z).numpy())
        print(f"held-out log loss {losses / n_test:.6f} AUC "
              f"{auc(labels[n_train:], np.concatenate(scores)):.6f}", flush=True)
    libra.finalize()


if __name__ == "__main__":
    main()
