"""Not valid Python: the capture must report the SyntaxError clearly."""

def broken(:
    return 1
