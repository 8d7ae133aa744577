"""The command line: the console entry point, the Hydra application, ``xmlthresh explain``."""
