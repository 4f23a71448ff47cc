"""Push/pull through real jobs (scheduler, servers, workers, maybe a switch)
against what numpy computes (python/tests/job.py)."""
import json

import pytest

from conftest import assert_passed, launch


def server_stats(output):
    return [json.loads(line.split("SERVER ", 1)[1]) for line in output.splitlines()
            if "SERVER {" in line]


@pytest.mark.parametrize("servers", [1, 2])
def test_async_sgd_sums_every_push(servers):
    status, output = launch("async", servers=servers, workers=2)
    assert_passed("async", 2, status, output)
    stats = server_stats(output)
    assert len(stats) == servers and all(s["malformed_pushes"] == 0 for s in stats)
    assert sum(s["switch_pushes"] for s in stats) == 0


@pytest.mark.parametrize("mode", ["sync", "adagrad"])
def test_sync_push_pull_steps_with_the_mean(mode):
    status, output = launch(mode, servers=2, workers=2)
    assert_passed(mode, 2, status, output)
    assert all(s["rounds"] == 4 for s in server_stats(output)), output


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_with_the_switch_the_same_values(mode):
    status, output = launch(mode, servers=2, workers=2, switch=True)
    assert_passed(mode, 2, status, output)
    # The hot path carried the pushes after the sampling epoch.
    assert sum(s["switch_pushes"] for s in server_stats(output)) > 0, output


def test_bad_arguments_raise_and_the_job_goes_on():
    status, output = launch("errors", servers=1, workers=1)
    assert_passed("errors", 1, status, output)
    assert "per key (dim): gradient ignored" in output
