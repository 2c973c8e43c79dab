"""The timing experiment's thread control: PyTorch's pool held with the
others, and never more threads than the CPUs it may use. Its statistics
are articlekit.experiment.measure's (tests/test_measure.py). No timing is
asserted here."""

import os

import torch
from threadpoolctl import threadpool_info

from experiments import timing


# ---- thread control -------------------------------------------------------------------


def test_inside_the_limit_every_pool_reports_one_thread_and_the_old_counts_come_back():
    before = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
    torch_before = torch.get_num_threads()
    with timing.limited_threads(1):
        assert all(p["num_threads"] == 1 for p in threadpool_info())
        assert torch.get_num_threads() == 1
        reported = timing.pools()
        assert {p["library"] for p in reported} >= {"openblas", "torch"}
        assert all(p["threads"] == 1 for p in reported)
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info()} == before
    assert torch.get_num_threads() == torch_before


def test_the_run_never_gives_a_pool_more_threads_than_the_cpus_it_may_use(params):
    p = params("timing") | {"threads": 512, "sweep_T": [8], "loop_max_T": 8, "T": 8, "d": 4}
    with kept_torch_threads():
        v = timing.run(p)
    available = len(os.sched_getaffinity(0))
    threads = v["threads"]
    assert threads["requested"] == 512 and threads["available"] == available
    assert threads["all_cores"] == v["main"]["all_cores"]["threads"] == available
    assert all(pool["threads"] <= available for pool in threads["pools_all_cores"])
    assert threads["widest_pool_one_thread"] == 1 == v["protocol"]["threads"]
    assert all(pool["threads"] == 1 for pool in threads["pools_one_thread"])


class kept_torch_threads:
    def __enter__(self):
        self.threads = torch.get_num_threads()

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)
