"""Entry point from a checkout: `python main.py <group> <backend> [options]` (same as `./cli.sh ...`)."""

import sys
from pathlib import Path

# The package lives in src/ (the standard src layout); run this checkout's copy, not an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from jax_benchmarks.cli.root import main  # noqa: E402

if __name__ == "__main__":
    main()
