"""`cortexd bench retrieval --memories N`: one scale row on a real daemon, and a clear error for a size it cannot seed."""

from __future__ import annotations

import re
import subprocess

from conftest import CORTEXD


def test_a_store_size_under_one_is_refused_with_what_was_wrong():
    result = subprocess.run(CORTEXD + ["bench", "retrieval", "--memories", "0"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "--memories takes a store size of at least 1, not 0" in result.stderr


def test_one_scale_row_is_measured_on_a_real_daemon_without_the_import_run():
    result = subprocess.run(CORTEXD + ["bench", "retrieval", "--quick", "--memories", "2000"], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 2,000 |")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    search_p50 = float(cells[1].split(" / ")[0])
    assert search_p50 > 0 and cells[5] == "exact"  # 2,000 memories are searched exactly, so no recall is reported
    assert float(cells[9]) > 0 and float(cells[10]) > 0  # restart to first search, settled RSS
    assert float(cells[11]) > 0  # an import into the filled store, all of its records imported
    assert "bulk import" not in result.stdout
    own = result.stdout.split("search for a question about the user's own", 1)[1].splitlines()[1]
    series = re.findall(r"(read when written|unread) ([\d.]+) / ([\d.]+) ms", own)
    assert own.startswith("- 2,000 memories: ") and [name for name, *_ in series] == ["read when written", "unread"]
    assert all(float(p50) > 0 for _, p50, _ in series)
    sweep = re.search(r"start-up sweep .* over ([\d,]+) memories .*: (\d+) memories/s", result.stdout)
    assert sweep and sweep.group(1) == "300" and int(sweep.group(2)) > 0, result.stdout
