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
        e = table[index] * values.unsqueeze(1)  # (occurrences, 1 + dim): w x, v x
        v = e[:, 1:]
        # Per row: sum_i w_i x_i, sum_i v_i x_i and sum_i (v_i x_i)^2 (the FM's squares).
        # (segment_reduce and its backward cost a third of embedding_bag's on CPU.)
        sums = torch.segment_reduce(torch.cat([e, v * v], dim=1), "sum", lengths=row_lengths,
                                    initial=0)
        linear, s, squares = sums[:, 0], sums[:, 1:1 + self.dim], sums[:, 1 + self.dim:]
        fm = 0.5 * (s * s - squares).sum(dim=1)
        # Per field: sum_i v_i x_i over the row's features in that field.
        h = torch.segment_reduce(v, "sum", lengths=field_lengths, initial=0)
        h = h.view(len(row_lengths), -1)
        for i, layer in enumerate(self.mlp):
            h = layer(h)
            if i + 1 < len(self.mlp):
                h = torch.relu(h)
        return self.bias + linear + fm + h.squeeze(1)


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
    args = parser.parse_args()
    hidden = [int(h) for h in args.hidden.split(",") if h]
    torch.set_num_threads(1)  # one process per node on a shared machine

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
    for epoch in range(1, args.epochs + 1):
        start, last_line, loss_sum, seen = time.time(), time.time(), 0.0, 0
        for it in range(iterations):
            first = min(len(train), it * args.batch)
            last = min(len(train), first + args.batch)
            if first < last:
                inputs, y = train.batch(first, last)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(model(*inputs), y)
                loss.backward()
                loss_sum += float(loss) * (last - first)
                seen += last - first
            sync.step()  # an empty push when this worker is out of rows
            if lead and time.time() - last_line >= 2:
                last_line = time.time()
                print(f"epoch {epoch}/{args.epochs} iteration {it + 1}/{iterations}: "
                      f"train log loss {loss_sum / max(1, seen):.5f}, "
                      f"{seen * workers / (last_line - start):.0f} samples/s", flush=True)
        seconds = time.time() - start
        if lead:
            test_loss, test_auc = evaluate(model, test, args.batch)
            rate = plan["train_rows"] / seconds
            print(f"epoch {epoch}/{args.epochs} done in {seconds:.1f} s: {rate:.0f} samples/s, "
                  f"held-out log loss {test_loss:.4f}, AUC {test_auc:.4f}", flush=True)
            report["epochs"].append({"epoch": epoch, "seconds": seconds,
                                     "samples_per_second": rate, "test_log_loss": test_loss,
                                     "test_auc": test_auc})
    if lead:
        print(f"held-out log loss {test_loss:.6f} AUC {test_auc:.6f}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
    libra.finalize()


if __name__ == "__main__":
    main()
