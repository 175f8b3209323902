"""What `jaxqueens count` writes (io/count.py): the summary, the enumeration's file names and the
checkpoint's exact packing of the finished chunks."""

import json
from pathlib import Path

import numpy as np

from jaxqueens.drivers.count import CountResult
from jaxqueens.io import count as countio


def test_finished_chunks_pack_exactly():
    done = {0: [2**100 + 7, 3], 4: [0, 2**64], 2: [1, 0]}
    have, words = countio.pack_chunks(done, 6)
    assert have.tolist() == [True, False, True, False, True, False] and words.dtype == np.uint32
    assert countio.unpack_chunks(have, words) == done


def test_summary_keys_and_oeis_values(tmp_path):
    res = CountResult(8, 92, None, 0.5, 0.25, 3, 40, 2, 1, 7)
    doc = json.loads(countio.write_summary(tmp_path, res, 2).read_text())
    assert list(doc) == [*countio.FIELDS, "oeis_A000170", "oeis_A002562", "processes"]
    assert (doc["total"], doc["oeis_A000170"], doc["oeis_A002562"], doc["processes"]) == (
        92,
        92,
        None,
        2,
    )
    torus = json.loads(countio.write_toroidal_summary(tmp_path, 7, 28, 0.5, 0.25).read_text())
    assert (torus["toroidal"], torus["total"], torus["oeis_A051906"]) == (True, 28, 28)


def test_enumeration_files_beside_a_npy_file_or_in_a_folder():
    assert countio.solution_paths("x/s.npy") == (Path("x/s.npy"), Path("x/s_fundamental.npy"))
    assert countio.solution_paths("run") == (
        Path("run/solutions.npy"),
        Path("run/solutions_fundamental.npy"),
    )
