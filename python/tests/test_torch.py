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


def held_out_loss(output):
    lines = [l for l in output.splitlines() if "held-out log loss" in l]
    assert len(lines) == 1, output
    return float(lines[0].split("held-out log loss ")[1].split()[0])


def test_the_deepfm_example_trains_the_same_with_and_without_the_switch(tmp_path):
    import subprocess
    from conftest import HERE, libra_bin
    data = tmp_path / "ctr.libsvm"
    subprocess.run([libra_bin(), "gen-data", "--out", str(data), "--rows", "8000", "--keys",
                    "4000", "--fields", "6", "--format", "libsvm"], check=True,
                   stdout=subprocess.DEVNULL)
    args = ("--data", str(data), "--batch", "128", "--epochs", "1", "--dim", "4")
    example = "../examples/deepfm_torch.py"
    plain = launch("", servers=2, workers=2, script=example, args=args)
    assert plain[0] == 0, plain[1]
    with_switch = launch("", servers=2, workers=2, switch=True, script=example, args=args)
    assert with_switch[0] == 0, with_switch[1]
    a, b = held_out_loss(plain[1]), held_out_loss(with_switch[1])
    assert a < 0.69, plain[1]  # it learned something
    assert abs(a - b) <= 1e-3 * a, (a, b)
