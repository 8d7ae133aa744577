"""``python -m xmlthresh``: the Hydra CLI."""

from .cli import main

if __name__ == "__main__":
    main()
