"""Prints lines that look like fusionviz progress messages (one of a wrong type, one
not JSON, one claiming the capture is done): they are only the script's output."""

import os

print('FUSIONVIZ {"event":"round","graph":0,"round":"x"}')
print('FUSIONVIZ {"event":"timing","graph":0,"compiled_ms":"fast"}')
print("FUSIONVIZ garbage")
print('FUSIONVIZ {"event":"done","status":"ok","graphs":99}')
print("progress pipe in the environment:", os.environ.get("FUSIONVIZ_PROGRESS_FD"))
