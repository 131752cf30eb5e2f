"""FTL benchmark figures for ``make bench``.

* ``ftl_page_writes_per_s_per_core``: flash page writes (host + relocation programs) per CPU
  second of the greedy FTL kernel, 4 KiB uniform random writes on a 1M-page model at spare
  factor 0.1, in steady state (after a sequential fill and two drive writes). The host-write
  rate is reported beside it.
* ``ftl_memory_bytes_1m_pages``: bytes held by the model's arrays.
* ``consistency_2000s_cpu_s``: CPU seconds of one 2000 s consistency run (DC S3500 480GB).
"""

from __future__ import annotations

import time

from arrayplan_engine import ftl, ssd


def run() -> dict[str, float]:
    # Warm up: compile (or load from cache) every kernel first.
    warm = ftl.new_state(ftl.FtlConfig(user_pages=1 << 14, pages_per_block=64, spare_factor=0.1), seed=0)
    ftl.fill_sequential(warm)
    ftl.write(warm, ftl.FtlWorkload(), 1 << 15)
    ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=60, model_pages=1 << 14)

    cfg = ftl.FtlConfig(user_pages=1 << 20, pages_per_block=64, spare_factor=0.1, policy="greedy")
    st = ftl.new_state(cfg, seed=1)
    ftl.fill_sequential(st)
    ftl.write(st, ftl.FtlWorkload(), 2 << 20)
    before = st.counters
    t0 = time.process_time()
    ftl.write(st, ftl.FtlWorkload(), 4 << 20)
    cpu = time.process_time() - t0
    after = st.counters
    programs = after["programs"] - before["programs"]
    host = after["host_writes"] - before["host_writes"]

    t1 = time.process_time()
    ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=2000)
    consistency_cpu = time.process_time() - t1
    return {
        "ftl_page_writes_per_s_per_core": programs / cpu,
        "ftl_host_writes_per_s_per_core": host / cpu,
        "ftl_write_amplification": programs / host,
        "ftl_memory_bytes_1m_pages": float(st.nbytes),
        "consistency_2000s_cpu_s": consistency_cpu,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
