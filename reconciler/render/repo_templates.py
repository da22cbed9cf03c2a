"""The loader of a repository's own `templates/`: regular files inside the work tree only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path

from ..safe_paths import UnsafePathError, read_repo_file


class RepoTemplates(jinja2.BaseLoader):
    """`templates/NAME` under the repository root, read with `read_repo_file` (no symlink, no FIFO,
    bounded size). A missing file is not found, so the packaged template is used instead."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        rel = "/".join(["templates", *split_template_path(template)])
        data = read_repo_file(self.root, rel)
        if data is None:
            raise jinja2.TemplateNotFound(template)
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UnsafePathError(f"{rel} is not UTF-8 text (byte {exc.start})", hint="save it as UTF-8") from None
        return source, str(self.root / rel), lambda: read_repo_file(self.root, rel) == data
