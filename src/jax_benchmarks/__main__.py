"""`python -m jax_benchmarks ...` and `python path/to/jax_benchmarks/__main__.py ...` (how the program
starts itself again in a fresh process: `jax_benchmarks.cli.relaunch`)."""

import sys
from pathlib import Path

if not __package__:
    # Run as a file, Python put this package's own folder first on sys.path, where its subpackage
    # `scipy` would shadow SciPy: put the folder that holds the package there instead.
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from jax_benchmarks.cli.root import main  # noqa: E402

if __name__ == "__main__":
    main()
