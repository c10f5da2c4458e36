"""``python -m selfrag_nb COMMAND ...`` is ``selfrag-nb COMMAND ...`` (selfrag_nb.cli.main).

Useful where the console script is not on PATH (Windows user installs, Colab, conda)."""

from __future__ import annotations

import sys

from selfrag_nb.cli import main

if __name__ == "__main__":
    sys.exit(main())
