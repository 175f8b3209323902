"""scripts/gpumodel/hlo: kernels, host syncs and bytes per loop iteration, read from small
hand-written optimised HLO (the form `compiled.as_text()` prints on a GPU)."""
# ruff: noqa: E501  (HLO instructions are one line each)

import pytest
from gpumodel import hlo as hm

# An entry with a setup fusion and a main loop (unknown trip count) whose body launches two
# fusions, a copy, an inner loop of known trip count 4 (one fusion per iteration) and a
# conditional with a cheap and a costly branch; the condition is one reduce fusion.
HLO = """
HloModule jit_f, entry_computation_layout={(s32[1024]{0})->s32[1024]{0}}

%fused_add (param_0.1: s32[1024]) -> s32[1024] {
  %param_0.1 = s32[1024]{0} parameter(0)
  %constant_1 = s32[] constant(1)
  %broadcast.1 = s32[1024]{0} broadcast(%constant_1), dimensions={}
  ROOT %add.1 = s32[1024]{0} add(%param_0.1, %broadcast.1)
}

%fused_slice (param_0.2: s32[1024,64], param_1.2: s32[]) -> s32[1024,1] {
  %param_0.2 = s32[1024,64]{1,0} parameter(0)
  %param_1.2 = s32[] parameter(1)
  %c0 = s32[] constant(0)
  ROOT %dynamic-slice.1 = s32[1024,1]{1,0} dynamic-slice(%param_0.2, %c0, %param_1.2), dynamic_slice_sizes={1024,1}
}

%fused_update (param_0.3: s32[1024,64], param_1.3: s32[1024,1], param_2.3: s32[]) -> s32[1024,64] {
  %param_0.3 = s32[1024,64]{1,0} parameter(0)
  %param_1.3 = s32[1024,1]{1,0} parameter(1)
  %param_2.3 = s32[] parameter(2)
  %c0.1 = s32[] constant(0)
  ROOT %dynamic-update-slice.1 = s32[1024,64]{1,0} dynamic-update-slice(%param_0.3, %param_1.3, %c0.1, %param_2.3)
}

%fused_reduce (param_0.4: s32[1024]) -> pred[] {
  %param_0.4 = s32[1024]{0} parameter(0)
  ROOT %r = pred[] constant(true)
}

%inner_body (t.1: (s32[], s32[1024])) -> (s32[], s32[1024]) {
  %t.1 = (s32[], s32[1024]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%t.1), index=0
  %v.1 = s32[1024]{0} get-tuple-element(%t.1), index=1
  %f.1 = s32[1024]{0} fusion(%v.1), kind=kLoop, calls=%fused_add
  ROOT %tuple.1 = (s32[], s32[1024]{0}) tuple(%i.1, %f.1)
}

%inner_cond (t.2: (s32[], s32[1024])) -> pred[] {
  %t.2 = (s32[], s32[1024]{0}) parameter(0)
  %i.2 = s32[] get-tuple-element(%t.2), index=0
  ROOT %lt = pred[] fusion(%i.2), kind=kLoop, calls=%fused_reduce
}

%cheap (p.5: s32[1024]) -> s32[1024] {
  ROOT %p.5 = s32[1024]{0} parameter(0)
}

%costly (p.6: s32[1024]) -> s32[1024] {
  %p.6 = s32[1024]{0} parameter(0)
  %g.6 = s32[1024]{0} fusion(%p.6), kind=kLoop, calls=%fused_add
  ROOT %h.6 = s32[1024]{0} fusion(%g.6), kind=kLoop, calls=%fused_add
}

%body (t.3: (s32[1024], s32[1024,64], s32[])) -> (s32[1024], s32[1024,64], s32[]) {
  %t.3 = (s32[1024]{0}, s32[1024,64]{1,0}, s32[]) parameter(0)
  %v.3 = s32[1024]{0} get-tuple-element(%t.3), index=0
  %big.3 = s32[1024,64]{1,0} get-tuple-element(%t.3), index=1
  %k.3 = s32[] get-tuple-element(%t.3), index=2
  %col = s32[1024,1]{1,0} fusion(%big.3, %k.3), kind=kLoop, calls=%fused_slice
  %upd = s32[1024,64]{1,0} fusion(%big.3, %col, %k.3), kind=kLoop, calls=%fused_update
  %copy.3 = s32[1024]{0} copy(%v.3)
  %zero = s32[] constant(0)
  %init = (s32[], s32[1024]{0}) tuple(%zero, %copy.3)
  %w = (s32[], s32[1024]{0}) while(%init), condition=%inner_cond, body=%inner_body, backend_config={"known_trip_count":{"n":"4"}}
  %wv = s32[1024]{0} get-tuple-element(%w), index=1
  %flag = pred[] constant(true)
  %c = s32[1024]{0} conditional(%flag, %wv, %wv), true_computation=%cheap, false_computation=%costly
  ROOT %tuple.3 = (s32[1024]{0}, s32[1024,64]{1,0}, s32[]) tuple(%c, %upd, %k.3)
}

%cond (t.4: (s32[1024], s32[1024,64], s32[])) -> pred[] {
  %t.4 = (s32[1024]{0}, s32[1024,64]{1,0}, s32[]) parameter(0)
  %v.4 = s32[1024]{0} get-tuple-element(%t.4), index=0
  ROOT %any = pred[] fusion(%v.4), kind=kInput, calls=%fused_reduce
}

ENTRY %main (x: s32[1024]) -> s32[1024] {
  %x = s32[1024]{0} parameter(0)
  %setup = s32[1024]{0} fusion(%x), kind=kLoop, calls=%fused_add
  %big = s32[1024,64]{1,0} constant({...})
  %k = s32[] constant(3)
  %start = (s32[1024]{0}, s32[1024,64]{1,0}, s32[]) tuple(%setup, %big, %k)
  %loop = (s32[1024]{0}, s32[1024,64]{1,0}, s32[]) while(%start), condition=%cond, body=%body
  ROOT %out = s32[1024]{0} get-tuple-element(%loop), index=0
}
"""

VEC = 1024 * 4  # bytes of s32[1024]
COL = 1024 * 4  # bytes of s32[1024,1]


def test_types_and_parsing():
    assert hm.type_bytes("s32[1024,64]{1,0}") == 1024 * 64 * 4
    assert hm.type_bytes("(s32[], pred[8], /*index=2*/u8[3,3])") == 4 + 8 + 9
    assert hm.type_bytes("token[]") == 0
    m = hm.parse(HLO)
    assert m.entry == "main" and {"body", "cond", "inner_body", "costly"} <= set(m.computations)
    loop = m.table("main")["loop"]
    assert loop.opcode == "while" and hm.trip_count(loop) is None
    assert hm.trip_count(m.table("body")["w"]) == 4
    assert m.table("fused_update")["param_2.3"].number == 2


def test_one_iteration_of_the_main_loop():
    m = hm.parse(HLO)
    loop = hm.hot_loop(m)
    assert loop.name == "loop"
    cost = hm.loop_iteration(m, loop)
    # body: slice fusion, update fusion, copy, 4 x (inner body + inner cond), costly branch (2);
    # cond: 1
    assert cost.kernels == 3 + 4 * 2 + 2 + 1
    # syncs: the loop's own condition, 4 inner conditions, the conditional's predicate
    assert cost.syncs == 1 + 4 + 1
    fused_add = 2 * VEC  # reads and writes s32[1024]
    slice_ = COL + 4 + COL  # reads the column it slices (and the index), writes it
    update = COL + 4 + COL  # in place: reads and writes the update only (and the index)
    copy = 2 * VEC
    inner = 4 * (fused_add + (4 + 1))  # fused_add, and the reduce reads s32[] writes pred[]
    costly = 2 * fused_add
    cond = VEC + 1
    assert cost.bytes == slice_ + update + copy + inner + costly + cond


def test_device_side_loops_have_no_syncs():
    m = hm.parse(HLO)
    cost = hm.loop_iteration(m, hm.hot_loop(m), host_sync=False)
    assert cost.syncs == 0 and cost.kernels == 14


def test_host_control_reads_the_thunk_sequence():
    assert hm.host_control(None)
    assert hm.host_control("017: kWhile [prev=000 (1) | next=026 (1)]")
    assert not hm.host_control("000: kCommandBuffer [source | sink]\n  001: kCopy")


def test_prediction_is_the_larger_of_launches_and_bytes():
    p = hm.predict(HLO, launch_s=3e-6, sync_s=10e-6, bandwidth=1e12)
    assert p.kernels == 14 and p.syncs == 6 and p.bound == "launch"
    assert p.launch_s == pytest.approx(14 * 3e-6 + 6 * 10e-6)
    assert p.seconds == pytest.approx(p.launch_s) and p.trip_known is None
    slow = hm.predict(HLO, launch_s=3e-6, sync_s=10e-6, bandwidth=1e6)
    assert slow.bound == "memory" and slow.seconds == pytest.approx(slow.bytes / 1e6)
    # a batch that fills a tenth of the device draws a tenth of the bandwidth
    tenth = hm.predict(HLO, launch_s=0.0, sync_s=0.0, bandwidth=1e9, fill=0.1)
    assert tenth.memory_s == pytest.approx(tenth.bytes / 1e8)


def test_no_loop_no_prediction():
    text = HLO.split("ENTRY")[0] + (
        "ENTRY %main (x: s32[1024]) -> s32[1024] {\n"
        "  %x = s32[1024]{0} parameter(0)\n"
        "  ROOT %y = s32[1024]{0} fusion(%x), kind=kLoop, calls=%fused_add\n}\n"
    )
    assert hm.predict(text, launch_s=1e-6, sync_s=1e-5, bandwidth=1e12) is None
    m = hm.parse(text)
    assert hm.computation_cost(m, m.entry).kernels == 1


def test_ptxas_resources():
    log = """ptxas info    : Compiling entry function 'loop_add_fusion' for 'sm_90a'
ptxas info    : Function properties for loop_add_fusion
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 16 registers, used 0 barriers
ptxas info    : Compiling entry function 'input_reduce_fusion' for 'sm_90a'
ptxas info    : Function properties for input_reduce_fusion
    64 bytes stack frame, 24 bytes spill stores, 32 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 64 bytes cumulative stack size
"""
    res = hm.ptxas_resources(log)
    assert res == [
        hm.KernelResources("loop_add_fusion", 16, 0, 0),
        hm.KernelResources("input_reduce_fusion", 255, 24, 32),
    ]


def test_branch_share_prices_the_costly_branch_by_how_often_it_runs():
    m = hm.parse(HLO)
    loop = hm.hot_loop(m)
    always, never = (hm.loop_iteration(m, loop, branch_share=s) for s in (1.0, 0.0))
    assert always.kernels - never.kernels == 2  # the costly branch: two fusions
    assert always.syncs == never.syncs  # the predicate is read either way
    tenth = hm.loop_iteration(m, loop, branch_share=0.1)
    assert tenth.kernels == pytest.approx(never.kernels + 0.2)
