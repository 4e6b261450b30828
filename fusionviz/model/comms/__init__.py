"""Communication in a compiled graph: collectives' times and the passes that reorder
them after fusion (multi-process jobs, #13). Pure functions of a ``Graph``."""
