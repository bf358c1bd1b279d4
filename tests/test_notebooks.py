"""The notebooks run top to bottom, offline, with the venv's Python; their outputs are stripped."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from repo_paths import NOTEBOOKS


@pytest.mark.parametrize("name", ["01_quickstart.ipynb", "02_judge_error_analysis.ipynb"])
def test_notebook_runs(name: str, tmp_path: Path) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{name}: outputs kept"
    # jupyter_client starts a kernel whose argv[0] is "python" with sys.executable: the venv's.
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors


def test_notebooks_use_the_public_api_only() -> None:
    for path in NOTEBOOKS.glob("*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        source = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
        assert not re.search(r"import _|\._[A-Za-z]", source), path.name
        assert not re.search(r"import (duckdb|streamlit)", source), path.name
