"""The PyTorch DeepFM example (python/examples/deepfm_torch.py) on Criteo-format
data, as a job of 2 servers and 2 workers: plain, with the switch, and
against `libra train --model deepfm` on the same file (skipped without torch)."""
import json
import subprocess

import pytest

from conftest import launch, libra_bin

pytest.importorskip("torch", reason="torch is not importable (Debian: python3-torch)")

ARGS = ("--batch", "100", "--epochs", "1", "--dim", "4")


def held_out_loss(output):
    # The example's last line (libra launch puts "[worker 0] " before it).
    lines = [l.split("] ", 1)[-1] for l in output.splitlines()]
    lines = [l for l in lines if l.startswith("held-out log loss ")]
    assert len(lines) == 1, output
    words = lines[0].split()
    assert words[4] == "AUC" and 0.5 < float(words[5]) <= 1, output
    return float(words[3])


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("deepfm") / "ctr.tsv"
    subprocess.run([libra_bin(), "gen-data", "--out", str(path), "--rows", "8000", "--keys",
                    "3000", "--format", "criteo"], check=True, stdout=subprocess.DEVNULL)
    return str(path)


@pytest.fixture(scope="module")
def plain_loss(data):
    status, output = launch("", servers=2, workers=2, script="../examples/deepfm_torch.py",
                            args=("--data", data) + ARGS)
    assert status == 0, output
    return held_out_loss(output)


def test_the_example_learns_as_libra_train_does(data, plain_loss, tmp_path):
    report = tmp_path / "train.json"
    subprocess.run([libra_bin(), "train", "--data", data, "--model", "deepfm", "-s", "2", "-w",
                    "2", "--batch", "100", "--epochs", "1", "--embedding-dim", "4",
                    "--json", str(report)], check=True, stdout=subprocess.DEVNULL)
    cpp = json.loads(report.read_text())["final"]["test_log_loss"]
    assert plain_loss < 0.69
    print(f"held-out log loss: example {plain_loss}, libra train {cpp}")
    assert abs(plain_loss - cpp) <= 0.01 * cpp, (plain_loss, cpp)


def test_the_switch_gives_the_same_held_out_loss(data, plain_loss):
    status, output = launch("", servers=2, workers=2, switch=True,
                            script="../examples/deepfm_torch.py", args=("--data", data) + ARGS)
    assert status == 0, output
    assert abs(held_out_loss(output) - plain_loss) <= 1e-3 * plain_loss, output
