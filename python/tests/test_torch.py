"""Torch tensors in place of numpy arrays (skipped without torch)."""
import pytest

from conftest import assert_passed, launch

torch = pytest.importorskip("torch", reason="torch is not importable (Debian: python3-torch)")


def test_push_pull_of_cpu_tensors():
    status, output = launch("torch_sync", servers=2, workers=2)
    assert_passed("torch_sync", 2, status, output)


def test_a_gpu_tensor_is_refused_clearly():
    import libra
    fake = torch.zeros(3, device="meta")  # not a CPU tensor
    with pytest.raises(TypeError, match="only CPU tensors"):
        libra._array(fake, "vals")

# The DeepFM example's tests are in test_deepfm.py.
