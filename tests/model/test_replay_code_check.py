"""A graph's code from a trace is run by ``fusionviz replay`` only when it is a flat
forward of aten and prims calls (a trace is a file from anyone, #19)."""

import pytest

from fusionviz.model.replay.code_check import code_problems

GOOD = '''

def forward(self, primals_1, primals_2):
    permute = torch.ops.aten.permute.default(primals_1, [1, 0])
    var_mean = torch.ops.aten.var_mean.correction(primals_2, [1], correction = 0, keepdim = True)
    getitem = var_mean[0];  var_mean = None
    full = torch.ops.aten.full.default([8], -inf, dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
    conv = torch.ops.prims.convert_element_type.default(full, torch.bfloat16)
    return (permute, getitem, conv)
'''


def test_a_graph_of_aten_and_prims_calls_passes():
    assert code_problems(GOOD) == []


@pytest.mark.parametrize("code, says", [
    ("import os\n" + GOOD, "not a single def forward"),
    (GOOD.replace("getitem = var_mean[0]", "getitem = __import__('os').system('x')"),
     "a call to __import__"),
    (GOOD.replace("torch.ops.aten.permute.default", "torch.load"), "a call to torch.load"),
    (GOOD.replace("torch.ops.aten.permute.default", "torch.ops.mylib.evil.default"),
     "a call to torch.ops.mylib.evil.default"),
    (GOOD.replace("primals_1, [1, 0]", "self.weight, [1, 0]"), "the attribute self.weight"),
    (GOOD.replace("var_mean[0]", "var_mean.__class__"), "the attribute var_mean.__class__"),
    (GOOD.replace("return (", "open('/tmp/x', 'w')\n    return ("), "a Expr statement"),
    (GOOD.replace("getitem = var_mean[0]", "getitem = [x for x in primals_1]"),
     "a ListComp expression"),
    (GOOD.replace("getitem = var_mean[0]", "getitem = lambda: 0"), "a Lambda expression"),
    (GOOD.replace("getitem = var_mean[0]", "getitem = secret"), "the name secret"),
    ("def forward(self, x):\n    return (x.attr.__globals__,)", "the attribute"),
    ("def forward(x):\n    return (x,)", "signature"),
    ("@dec\ndef forward(self, x):\n    return (x,)", "signature"),
    ("def forward(self, x:\n", "does not parse"),
])
def test_anything_else_is_refused_naming_it(code, says):
    problems = code_problems(code)
    assert problems and any(says in p for p in problems), problems
