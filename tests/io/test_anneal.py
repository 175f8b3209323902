"""io.anneal: where ``anneal --out`` puts each method's outputs, checkpoint and traces figure."""

from pathlib import Path

from jaxqueens.io import anneal as anneal_io
from jaxqueens.io import checkpoint


def test_one_method_writes_into_out_several_into_subfolders(tmp_path):
    assert anneal_io.method_folder(tmp_path, "ta", ["ta"]) == tmp_path
    assert anneal_io.method_folder(tmp_path, "sa", ["ls", "sa"]) == tmp_path / "sa"
    assert anneal_io.method_folder(None, "ta", ["ta"]) is None
    assert anneal_io.checkpoint_file(None) is None
    assert anneal_io.checkpoint_file(tmp_path / "sa") == tmp_path / "sa" / checkpoint.FILENAME
    assert anneal_io.traces_file(str(tmp_path)) == Path(tmp_path) / "traces.png"


def test_a_method_is_finished_once_its_summary_exists(tmp_path):
    assert not anneal_io.run_finished(tmp_path)
    (tmp_path / "summary.json").write_text("{}\n")
    assert anneal_io.run_finished(tmp_path)
