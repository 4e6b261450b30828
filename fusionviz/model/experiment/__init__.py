"""What-if experiments: running a baseline and its variants (runs), comparing two traces (compare); the knobs themselves are ``model.whatif``."""
