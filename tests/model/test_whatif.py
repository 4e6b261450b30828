"""What-if knobs: to a trace's config and back, and from the recorded experiments."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.whatif import WhatIf

EXPERIMENTS = Path(__file__).parents[1] / "data" / "experiments"


@pytest.mark.parametrize("whatif", [
    WhatIf(),
    WhatIf(stop_after_round=0),
    WhatIf(forbid=(("op0", "op5"),), force=(("op2", "op0"), ("op3", "op2")), graph=1),
    WhatIf(keep_spills=True, stop_after_round=3),
])
def test_config_round_trip(whatif):
    assert WhatIf.from_config(whatif.to_config()) == whatif


def test_recorded_variants_read_back_as_the_knobs_they_ran_under():
    forbid = load_trace(EXPERIMENTS / "cpu_forbid_whatif_ops" / "b.json.gz")
    assert WhatIf.from_config(forbid.config) == WhatIf(forbid=(("op0", "op5"),))
    sweep = load_trace(EXPERIMENTS / "cpu_sweep_whatif_ops" / "round_2.json.gz")
    assert WhatIf.from_config(sweep.config) == WhatIf(stop_after_round=2)
    spills = load_trace(EXPERIMENTS / "gpu_keep_spills_spill_branches" / "b.json.gz")
    assert WhatIf.from_config(spills.config) == WhatIf(keep_spills=True)


def test_values_of_the_wrong_kind_are_left_out():
    config = {"fusionviz.forbid": "op1 op2,op2 op3,op4", "fusionviz.stop_after_round": "2",
              "fusionviz.keep_spills": "yes", "fusionviz.rules_graph": True}
    assert WhatIf.from_config(config) == WhatIf(forbid=(("op3", "op4"),))
