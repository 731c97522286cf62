"""Entry point: `python main.py <group> <backend> [options]` (same as `./cli.sh ...`)."""

from src.cli import main

if __name__ == "__main__":
    main()
