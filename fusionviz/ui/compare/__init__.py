"""The comparison window of an experiment: the window, its synchronized graph views (sync) and its tables."""
