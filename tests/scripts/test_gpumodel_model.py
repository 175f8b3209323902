"""scripts/gpumodel/model: the described GPUs and the thread kernels' model (the hot loop read
from PTX and SASS listings, occupancy from registers and shared memory, the predicted rate)."""

from __future__ import annotations

import pytest
from gpumodel import model as gpus

from jaxqueens.parallel import sizing

PTX = """
.visible .entry k(
{
	mov.u32 	%r1, 0;
$L__BB0_1:
	setp.eq.s32 	%p1, %r1, 9;
	@%p1 bra 	$L__BB0_4;
$L__BB0_2:
	add.s32 	%r1, %r1, 1;
	and.b32 	%r2, %r1, 3;
	setp.ne.s32 	%p2, %r2, 0;
	@%p2 bra 	$L__BB0_2;
	bra.uni 	$L__BB0_1;
$L__BB0_4:
	ret;
}
"""

SASS = """
.L_x_0:
        /*0000*/                   LDS.128 R4, [R2] ;
        /*0010*/                   IMAD.MOV.U32 R0, RZ, RZ, R4 ;
        /*0020*/                   LOP3.LUT R5, R5, R0, RZ, 0xfc, !PT ;
        /*0030*/                   POPC R6, R5 ;
        /*0040*/                   ISETP.NE.AND P0, PT, R5, RZ, PT ;
        /*0050*/               @P0 BRA `(.L_x_0) ;
        /*0060*/                   EXIT ;
"""


def test_descriptions_parse_clock_and_shared_memory():
    h100 = gpus.load("h100")
    assert (h100.sms, h100.clock_ghz, h100.shared_per_sm) == (132, 1.98, 233472)
    assert gpus.load("rtx4090").compute_capability == (8, 9)


def test_loop_body_is_the_innermost_loop():
    assert gpus.loop_body(PTX) == ["add.s32", "and.b32", "setp.ne.s32", "bra"]
    assert gpus.loop_body(SASS) == [
        "LDS.128",
        "IMAD.MOV.U32",
        "LOP3.LUT",
        "POPC",
        "ISETP.NE.AND",
        "BRA",
    ]
    assert gpus.loop_body("no loop here") == []


def test_occupancy_limits():
    h100, rtx = gpus.load("h100"), gpus.load("rtx4090")
    assert gpus.occupancy(h100, 32, 1) == 32  # blocks per SM bind: one warp a block
    assert gpus.occupancy(h100, 32, 4) == 64  # warps per SM bind
    assert gpus.occupancy(h100, 128, 4) == 16  # registers bind: 65536 / (128 * 32)
    assert gpus.occupancy(rtx, 32, 1) == 24
    assert gpus.occupancy(h100, 24, 5, shared=49152) == 20  # 4 blocks of 48 KiB
    assert gpus.occupancy(rtx, 24, 5, shared=49152) == 10


def test_predicted_rate():
    h100 = gpus.load("h100")
    body = gpus.loop_body(SASS)
    p = gpus.predict_threads(h100, body, 1, 32, 1, sass=True)
    # ALU: LOP3, ISETP and POPC at a quarter rate (4 slots); FMA: IMAD; LDS and BRA elsewhere
    assert (p.alu, p.fma, p.conversions, p.shared) == (3, 1, 1, 4)
    assert p.cycles_per_step == max((3 + 3) / 2, 1 / 2, 6 / 4, 4)
    assert p.warps_per_sm == 32 and p.efficiency == 1.0
    assert p.lane_steps_per_s == pytest.approx(132 * 1.98e9 * 32 / p.cycles_per_step)
    ptx = gpus.predict_threads(h100, gpus.loop_body(PTX), 1, 32, 1, sass=False)
    assert (ptx.alu, ptx.fma, ptx.cycles_per_step) == (4, 0, 2)  # every PTX op on the ALU
    few = gpus.predict_threads(h100, body, 1, 32, 1, sass=True, shared=233472 // 4)
    assert few.warps_per_sm == 4 and few.efficiency == 4 / gpus.HIDING_WARPS


def test_described_devices_parse_with_their_facts():
    h100 = gpus.load("h100")
    assert (h100.sms, h100.threads_per_sm, h100.compute_capability) == (132, 2048, (9, 0))
    assert h100.arch == "sm_90a" and h100.parallelism == 132 * 2048
    assert h100.target.budget_bytes == int(84942979072 * sizing.MEMORY_FRACTION)
    rtx = gpus.load("rtx4090")
    assert (rtx.threads_per_sm, rtx.arch, rtx.memory_bytes) == (1536, "sm_89", 25757220864)
    assert gpus.load("a100").bandwidth == 2.039e12
