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
