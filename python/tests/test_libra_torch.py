"""libra.torch: the Embedding against torch.nn.EmbeddingBag, BSP round trips
with several workers and servers (python/tests/torch_job.py), and the errors
a wrong argument gets (skipped without torch)."""
import numpy as np
import pytest

from conftest import assert_passed, launch

torch = pytest.importorskip("torch", reason="torch is not importable (Debian: python3-torch)")
import libra.torch as lt  # noqa: E402


def test_embedding_matches_embedding_bag_and_pushes_only_its_rows():
    status, output = launch("grad", servers=1, workers=1, script="torch_job.py")
    assert_passed("grad", 1, status, output)


@pytest.mark.parametrize("servers,workers", [(1, 2), (2, 3)])
def test_bsp_round_trip_steps_with_the_workers_mean(servers, workers):
    status, output = launch("bsp", servers=servers, workers=workers, script="torch_job.py")
    assert_passed("bsp", workers, status, output)


def test_bsp_round_trip_with_the_switch():
    status, output = launch("bsp", servers=2, workers=2, switch=True, script="torch_job.py",
                            args=("switch",))
    assert_passed("bsp", 2, status, output)


# Bad arguments fail before anything is sent (no job needed).

def test_keys_of_a_wrong_dtype_are_a_type_error():
    emb = lt.Embedding(4)
    with pytest.raises(TypeError, match="int64"):
        emb(torch.zeros(2, 3))  # float keys
    with pytest.raises(TypeError, match="integers"):
        emb(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="integer tensor or numpy array"):
        emb([[1, 2]])


def test_shapes_and_offsets_are_checked():
    emb = lt.Embedding(4)
    keys = torch.arange(6)
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        emb(keys.view(1, 2, 3))
    with pytest.raises(ValueError, match="need offsets"):
        emb(keys)
    with pytest.raises(ValueError, match="offsets must be None"):
        emb(keys.view(2, 3), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="start at 0"):
        emb(keys, torch.tensor([1, 3]))
    with pytest.raises(ValueError, match="start at 0"):
        emb(keys, torch.tensor([0, 4, 2]))
    with pytest.raises(ValueError, match="start at 0"):
        emb(keys, torch.tensor([0, 7]))
    with pytest.raises(TypeError, match="offsets must be a 1-D int64"):
        emb(keys, torch.tensor([0.0, 2.0]))


def test_per_sample_weights_are_checked():
    keys = torch.arange(6).view(2, 3)
    with pytest.raises(TypeError, match="float32"):
        lt.Embedding(4)(keys, per_sample_weights=torch.ones(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        lt.Embedding(4)(keys, per_sample_weights=torch.ones(3, 2))
    with pytest.raises(ValueError, match="mode='sum'"):
        lt.Embedding(4, mode="mean")(keys, per_sample_weights=torch.ones(2, 3))


def test_bad_construction():
    with pytest.raises(ValueError, match="dim"):
        lt.Embedding(0)
    with pytest.raises(ValueError, match="mode"):
        lt.Embedding(4, mode="median")
    with pytest.raises(TypeError, match="float32"):
        lt.DenseSync(torch.nn.Linear(2, 2).double(), dim=4)


def test_dense_sync_packs_parameters_in_libra_train_dense_keys():
    model = torch.nn.Sequential(lt.Embedding(3), torch.nn.Linear(4, 2))  # 10 parameters
    sync = lt.DenseSync(model, dim=3)
    assert sync.embeddings == [model[0]] and sync.num_keys == 4
    keys, values = sync.initial_values()
    assert sorted(keys.tolist()) == sorted(int(libra_key(i)) for i in range(4))
    assert list(keys) == sorted(keys)
    # Unpacking what was packed gives the parameters back.
    want = [p.detach().clone() for p in model.parameters()]
    for p in model.parameters():
        p.data.zero_()
    sync._load(values)
    for p, w in zip(model.parameters(), want):
        assert torch.equal(p.detach(), w)


def libra_key(i):
    import libra
    return libra._libra.dense_key(i)


def test_unique_keys_mix_like_libra_train():
    import libra
    keys = np.array([5, 2**64 - 1, 5, 0], dtype=np.uint64)
    unique, inverse = libra.unique_keys(keys)
    assert list(unique) == sorted(set(libra.mix_keys(keys).tolist()))
    assert np.array_equal(unique[inverse], libra.mix_keys(keys))
    raw, _ = libra.unique_keys(keys, mix=False)
    assert list(raw) == [0, 5, 2**64 - 1]


# The fused sparse op (C++) against the same sums written in torch, with
# torch's autograd as the gradient reference (no job needed).

def bag_sums_reference(rows, index, lengths, weights):
    x = rows[index] * (1 if weights is None else weights.unsqueeze(1))
    bags = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    sums = torch.zeros(len(lengths), rows.shape[1]).index_add(0, bags, x)
    squares = torch.zeros(len(lengths), rows.shape[1]).index_add(0, bags, x * x)
    return sums, squares


@pytest.mark.parametrize("weighted", [False, True])
def test_bag_sums_and_gradients_match_torch(weighted):
    gen = torch.Generator().manual_seed(3)
    rows = torch.randn(7, 5, generator=gen)
    index = torch.randint(0, 7, (30,), generator=gen)
    lengths = torch.tensor([4, 0, 9, 1, 16], dtype=torch.int64)  # an empty bag
    weights = torch.rand(30, generator=gen) if weighted else None
    a = rows.clone().requires_grad_()
    wa = weights.clone().requires_grad_() if weighted else None
    sums, squares = lt.bag_sums(a, index, lengths, wa, squares=True)
    b = rows.clone().requires_grad_()
    wb = weights.clone().requires_grad_() if weighted else None
    want_sums, want_squares = bag_sums_reference(b, index, lengths, wb)
    assert torch.allclose(sums, want_sums, atol=1e-5)
    assert torch.allclose(squares, want_squares, atol=1e-5)
    assert float(sums[1].abs().sum()) == 0  # the empty bag
    r, q = torch.randn(sums.shape, generator=gen), torch.randn(sums.shape, generator=gen)
    ((sums * r).sum() + (squares * q).sum()).backward()
    ((want_sums * r).sum() + (want_squares * q).sum()).backward()
    assert torch.allclose(a.grad, b.grad, atol=1e-4)
    if weighted:
        assert torch.allclose(wa.grad, wb.grad, atol=1e-4)
    # Without squares, and with only one output used: the same sums' gradient.
    c = rows.clone().requires_grad_()
    (lt.bag_sums(c, index, lengths, weights) * r).sum().backward()
    d = rows.clone().requires_grad_()
    (bag_sums_reference(d, index, lengths, weights)[0] * r).sum().backward()
    assert torch.allclose(c.grad, d.grad, atol=1e-4)


def test_bag_sums_refuses_bad_arguments():
    rows, index = torch.zeros(3, 2), torch.tensor([0, 2, 1])
    with pytest.raises(ValueError, match="lengths sum to 2"):
        lt.bag_sums(rows, index, torch.tensor([1, 1]))
    with pytest.raises(ValueError, match="not a row"):
        lt.bag_sums(rows, torch.tensor([0, 3, 1]), torch.tensor([3]))
    with pytest.raises(ValueError, match="negative"):
        lt.bag_sums(rows, index, torch.tensor([4, -1]))
    with pytest.raises(TypeError, match="int64"):
        lt.bag_sums(rows, index.int(), torch.tensor([3]))
    with pytest.raises(TypeError, match="float32"):
        lt.bag_sums(rows, index, torch.tensor([3]), torch.ones(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="float32"):
        lt.bag_sums(rows.double(), index, torch.tensor([3]))
    with pytest.raises(ValueError, match="one per index"):
        lt.bag_sums(rows, index, torch.tensor([3]), torch.ones(2))
