"""A PyTorch DeepFM trained on Libra's parameter servers with libra.torch.

    libra gen-data --out ctr.tsv --rows 200000 --keys 100000 --format criteo
    libra launch -s 2 -w 2 [--local-switch] -- /usr/bin/python3 python/examples/deepfm_torch.py \\
        --data ctr.tsv --batch 1000 --epochs 1

The same model, data split and optimizer as `libra train --model deepfm` on
the same file: every feature key holds 1 + dim floats on the servers (its
linear weight and its embedding), pulled by a libra.torch.Embedding; the
bias and the MLP are ordinary torch parameters that libra.torch.DenseSync
keeps on the servers. The servers run Adagrad in C++, synchronously (BSP):
each iteration steps with the mean of the workers' gradients. With
`--local-switch` the hot rows are summed by the switch; nothing here changes.
Worker 0 prints progress, the held-out log loss and AUC after each epoch and
a last line `held-out log loss X AUC Y`.
"""
import argparse
import json
import math
import time

import numpy as np
import torch

import libra
import libra.torch


class DeepFm(torch.nn.Module):
    """logit = b + sum_i w_i x_i + FM(v) + MLP(per-field sums of v_i x_i)."""

    def __init__(self, fields, dim, hidden):
        super().__init__()
        self.fields, self.dim = fields, dim
        self.table = libra.torch.Embedding(1 + dim)  # [w, v_1..v_dim] per key
        self.phases = None  # a Phases to time the pull apart from the rest (--profile)
        self.bias = torch.nn.Parameter(torch.zeros(1))
        sizes = [fields * dim] + hidden + [1]
        self.mlp = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        for layer in self.mlp:  # Glorot-uniform weights, zero biases, as libra train
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, keys, values, row_lengths, field_lengths):
        """One batch in CSR: per feature occurrence its key and value, in row
        order and by field within a row; each row's number of features and
        each (row, field)'s."""
        table, index = self.table.lookup(keys)
        if self.phases is not None:
            self.phases.lap("pull")
        rows, fields, width = len(row_lengths), self.fields, 1 + self.dim
        # One C++ pass over the occurrences (libra.torch.bag_sums): per (row,
        # field) the sums of x_i [w_i, v_i] and of their squares (the FM's).
        sums, squares = libra.torch.bag_sums(table, index, field_lengths, values, squares=True)
        sums = sums.view(rows, fields, width)
        linear = sums[:, :, 0].sum(dim=1)  # sum_i w_i x_i
        h = sums[:, :, 1:].reshape(rows, fields * self.dim)  # per field: sum_i v_i x_i
        s = h.view(rows, fields, self.dim).sum(dim=1)
        fm = 0.5 * ((s * s).sum(dim=1) - squares.view(rows, -1, width)[:, :, 1:].sum(dim=(1, 2)))
        # The MLP's layers as 1x1 convolutions of their own weights: the same
        # function and gradients, but torch runs them with oneDNN, 3x faster
        # on CPU than the sgemm of Debian's torch (built with BLAS_INFO=generic,
        # so the reference BLAS: docs/PERFORMANCE.md).
        h = h.view(rows, -1, 1, 1)
        for i, layer in enumerate(self.mlp):
            h = torch.nn.functional.conv2d(h, layer.weight.view(*layer.weight.shape, 1, 1),
                                           layer.bias)
            if i + 1 < len(self.mlp):
                h = torch.relu(h)
        return self.bias + linear + fm + h.view(rows)


class Phases:
    """Where a worker's iterations go (--profile): seconds per phase, by laps."""

    def __init__(self):
        self.seconds, self.iterations, self.last = {}, 0, time.perf_counter()

    def lap(self, name):
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self.last
        self.last = now

    def ms_per_iteration(self):
        return {k: 1e3 * v / max(1, self.iterations) for k, v in self.seconds.items()}


class Rows:
    """Rows of a data set read by libra.read_dataset, as torch tensors."""

    def __init__(self, data, take=None):
        begin = data["row_begin"].astype(np.int64)
        if take is not None:  # these rows only, in this order
            counts = begin[take + 1] - begin[take]
            starts = np.repeat(begin[take], counts)
            within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            occ = starts + within
            begin = np.concatenate([[0], np.cumsum(counts)])
            labels = data["labels"][take]
        else:
            occ, labels = slice(None), data["labels"]
        self.begin = begin
        self.keys = data["keys"][occ]
        self.values = torch.from_numpy(np.ascontiguousarray(data["values"][occ]))
        fields = data["fields"][occ].astype(np.int64)
        self.num_fields = data["num_fields"]
        row_of = np.repeat(np.arange(len(labels)), np.diff(begin))
        bag = row_of * self.num_fields + fields
        if np.any(np.diff(bag) < 0):  # features by field within each row, for the field bags
            order = np.argsort(bag, kind="stable")
            self.keys, self.values, bag = self.keys[order], self.values[order], bag[order]
        # Where the features of bag (row r, field f) begin, for every bag.
        self.field_begin = np.searchsorted(bag, np.arange(len(labels) * self.num_fields + 1))
        self.labels = torch.from_numpy(np.ascontiguousarray(labels))

    def __len__(self):
        return len(self.labels)

    def batch(self, first, last):
        a, b = int(self.begin[first]), int(self.begin[last])
        rows = torch.from_numpy(np.diff(self.begin[first:last + 1]))
        fields = torch.from_numpy(np.diff(
            self.field_begin[first * self.num_fields:last * self.num_fields + 1]))
        return (self.keys[a:b], self.values[a:b], rows, fields), self.labels[first:last]


def auc(labels, scores):
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = labels > 0.5
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def evaluate(model, test, batch):
    scores, loss = [], 0.0
    with torch.no_grad():
        for at in range(0, len(test), batch):
            inputs, y = test.batch(at, min(at + batch, len(test)))
            z = model(*inputs)
            loss += float(torch.nn.functional.binary_cross_entropy_with_logits(
                z, y, reduction="sum"))
            scores.append(torch.sigmoid(z).numpy())
    return loss / len(test), auc(test.labels.numpy(), np.concatenate(scores))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="Criteo TSV or libsvm (libra gen-data)")
    parser.add_argument("--batch", type=int, default=1000, help="rows per worker per iteration")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--dim", type=int, default=8, help="embedding size")
    parser.add_argument("--hidden", default="32,16", help="MLP hidden units")
    parser.add_argument("--lr", type=float, default=0.05, help="Adagrad learning rate")
    parser.add_argument("--test-fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="worker 0 writes its figures here")
    parser.add_argument("--profile", action="store_true",
                        help="time each phase of an iteration; worker 0 reports ms per iteration")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads per worker (1: each node is one process of a "
                             "job sharing the machine's cores)")
    args = parser.parse_args()
    hidden = [int(h) for h in args.hidden.split(",") if h]
    # One thread: a job is several processes (scheduler, servers, workers) on
    # the same cores, and the tensors of one batch are too small for torch's
    # intra-op threads to pay for their synchronisation.
    torch.set_num_threads(args.threads)

    libra.start()
    if libra.is_scheduler():
        libra.finalize()
        return
    rank, workers = libra.rank(), libra.num_workers()
    # Every node builds the same model; the servers start the dense keys from it.
    lead = libra.is_worker() and rank == 0
    # Worker 0 reads every row (it also evaluates); the others their shard;
    # the servers read a shard too, for the number of fields only.
    data = libra.read_dataset(args.data) if lead else \
        libra.read_dataset(args.data, shard=rank if libra.is_worker() else 0, num_shards=workers)
    torch.manual_seed(args.seed)
    model = DeepFm(data["num_fields"], args.dim, hidden)
    if libra.is_server():
        libra.torch.serve(model, dim=1 + args.dim, optimizer="adagrad", lr=args.lr,
                          init_scale=0.1 / math.sqrt(args.dim), seed=args.seed)
        return

    # As libra train: the last test-fraction of the rows is held out; worker i
    # trains on rows i, i + N, ...; every worker runs the same iterations.
    plan = libra.job_plan(data["file_rows"], args.test_fraction, workers, args.batch)
    mine = plan["train_rows_of_worker"][rank]
    if lead:
        train = Rows(data, np.arange(0, plan["train_rows"], workers))
        test = Rows(data, np.arange(plan["train_rows"], plan["total_rows"]))
    else:
        train = Rows(data, np.arange(mine))
    del data
    iterations = plan["iterations_per_epoch"]

    sync = libra.torch.DenseSync(model, dim=1 + args.dim)
    sync.pull()
    report = {"workers": workers, "servers": libra.num_servers(), "batch": args.batch,
              "train_rows": plan["train_rows"], "epochs": []}
    phases = model.phases = Phases() if args.profile else None
    for epoch in range(1, args.epochs + 1):
        start, last_line, loss_sum, seen = time.time(), time.time(), 0.0, 0
        for it in range(iterations):
            first = min(len(train), it * args.batch)
            last = min(len(train), first + args.batch)
            if phases:
                phases.iterations += 1
                phases.lap("other")
            if first < last:
                inputs, y = train.batch(first, last)
                if phases:
                    phases.lap("batch")
                loss = torch.nn.functional.binary_cross_entropy_with_logits(model(*inputs), y)
                if phases:
                    phases.lap("forward")
                loss.backward()
                if phases:
                    phases.lap("backward")
                loss_sum += float(loss) * (last - first)
                seen += last - first
            sync.step()  # an empty push when this worker is out of rows
            if phases:
                phases.lap("step")
            if lead and time.time() - last_line >= 2:
                last_line = time.time()
                print(f"epoch {epoch}/{args.epochs} iteration {it + 1}/{iterations}: "
                      f"train log loss {loss_sum / max(1, seen):.5f}, "
                      f"{seen * workers / (last_line - start):.0f} samples/s", flush=True)
        seconds = time.time() - start
        if lead:
            model.phases = None  # the held-out evaluation is not an iteration
            test_loss, test_auc = evaluate(model, test, args.batch)
            model.phases = phases
            if phases:
                phases.last = time.perf_counter()
            rate = plan["train_rows"] / seconds
            print(f"epoch {epoch}/{args.epochs} done in {seconds:.1f} s: {rate:.0f} samples/s, "
                  f"held-out log loss {test_loss:.4f}, AUC {test_auc:.4f}", flush=True)
            report["epochs"].append({"epoch": epoch, "seconds": seconds,
                                     "samples_per_second": rate, "test_log_loss": test_loss,
                                     "test_auc": test_auc})
    if lead:
        if phases:
            report["ms_per_iteration"] = phases.ms_per_iteration()
            print("ms per iteration: " + ", ".join(
                f"{k} {v:.2f}" for k, v in report["ms_per_iteration"].items()), flush=True)
        print(f"held-out log loss {test_loss:.6f} AUC {test_auc:.6f}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
    libra.finalize()


if __name__ == "__main__":
    main()
