"""`segkit trace breakdown`: a step's time by kind of work (GEMMs, attention, nvFuser and other memory-bound
kernels, idle, host lead-in), on two recorded H100 step profiles and on a hand-built trace with step ranges whose
numbers are worked out by hand below."""

from __future__ import annotations

import json

import pytest

from segkit.trace import load
from segkit.trace.breakdown import KINDS, StepRangeError, kind, per_step
from segkit.trace.model import Kernel, Range, Trace
from segkit_cli.main import main
from tests.conftest import DATA

PROFILES = DATA / "step_h100" / "profiles"
COMPILE, SEGKIT = PROFILES / "llama3-8b-x1-compile.json.gz", PROFILES / "llama3-8b-x1-segkit-auto.json.gz"


@pytest.mark.parametrize("name, want", [
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0", "attention"),
    ("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int)", "attention"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(Flash_fwd_params)", "attention"),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT", "gemm"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", "gemm"),
    ("nvf::nvfuser_inner_persistent_f0_c1_r0_g0(nvf::Tensor<nvf::__bfloat, 3, 3>, ...)", "nvfuser memory-bound"),
    ("triton_red_fused__to_copy_add_mean_mul_rsqrt_0", "other memory-bound"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>", "other memory-bound"),
])
def test_each_kernel_name_has_its_kind(name, want):
    assert kind(name) == want


@pytest.mark.parametrize("path", [COMPILE, SEGKIT], ids=["compile", "segkit-auto"])
def test_a_profile_without_step_ranges_is_one_step_and_every_kernel_counts_once(path):
    """Asked for (``whole``): a profile without step ranges is read as one step."""
    trace = load(path)
    got = per_step(trace, whole=True)
    assert got["steps"] == 1 and got["lead-in us"] is None
    assert sum(got[f"{k} kernels"] for k in KINDS) == len(trace.kernels)
    total = sum(k.duration_ns for k in trace.kernels) / 1e3
    assert sum(got[f"{k} us"] for k in KINDS) == pytest.approx(total)
    assert got["memory-bound us"] == pytest.approx(got["nvfuser memory-bound us"] + got["other memory-bound us"])
    span = (max(k.end_ns for k in trace.kernels) - min(k.start_ns for k in trace.kernels)) / 1e3
    assert got["busy us"] + got["idle us"] == pytest.approx(span) == pytest.approx(got["step us"])
    assert got["busy us"] <= total + 1e-6  # overlapping kernels count once in busy time


def test_the_recorded_steps_differ_where_segkit_runs_nvfuser_kernels():
    a, b = per_step(load(COMPILE), whole=True), per_step(load(SEGKIT), whole=True)
    assert a["nvfuser memory-bound kernels"] == 0 and b["nvfuser memory-bound kernels"] > 0
    assert a["gemm kernels"] == b["gemm kernels"] and a["attention kernels"] == b["attention kernels"]


def _k(name: str, start: int, dur: int, launch: int) -> Kernel:
    return Kernel(name, start, dur, launch_ns=launch, thread=1)


def test_steps_in_ranges_give_lead_in_idle_and_the_median_per_step():
    # step 1: host starts at 0; gemm 100..300, nvfuser 300..350, triton 400..420 (idle 350..400): lead-in 100,
    # busy 270, idle 50, step 420.  step 2: host at 1000; gemm 1200..1400, flash 1400..1500, nvfuser 1450..1480
    # (overlaps flash): lead-in 200, busy 300, idle 0, step 500.  Medians of two: lead-in 150, step 460.
    kernels = [_k("nvjet_gemm", 100, 200, 10), _k("nvfuser_pointwise", 300, 50, 20), _k("triton_poi", 400, 20, 30),
               _k("nvjet_gemm", 1200, 200, 1010), _k("flash_fwd", 1400, 100, 1020),
               _k("nvfuser_reduction", 1450, 30, 1030)]
    ranges = [Range("step", 0, 90, thread=1), Range("step", 1000, 1090, thread=1)]
    for r in ranges:
        r.kernels = [k for k in kernels if r.start_ns <= k.launch_ns <= r.end_ns]
    got = per_step(Trace("synthetic", "nsys", kernels, ranges, []))
    assert got["steps"] == 2
    assert got["lead-in us"] == pytest.approx(0.150)
    assert got["step us"] == pytest.approx(0.460)
    assert got["gemm us"] == pytest.approx(0.200)
    assert got["nvfuser memory-bound us"] == pytest.approx(0.040)  # median of 50 and 30 ns
    assert got["attention us"] == pytest.approx(0.050)  # median of 0 and 100 ns
    assert got["busy us"] == pytest.approx(0.285) and got["idle us"] == pytest.approx(0.025)


def test_cli_breakdown_side_by_side_as_json(capsys):
    assert main(["trace", "breakdown", str(COMPILE), str(SEGKIT), "--format", "json", "--whole"]) == 0
    rows = {r["per step"]: r for r in json.loads(capsys.readouterr().out)["breakdown"]}
    mb = rows["memory-bound"]
    assert mb["llama3-8b-x1-segkit-auto / llama3-8b-x1-compile"] == pytest.approx(
        mb["llama3-8b-x1-segkit-auto us"] / mb["llama3-8b-x1-compile us"], rel=1e-2)


def test_cli_breakdown_refuses_a_step_range_the_profile_lacks(capsys):
    assert main(["trace", "breakdown", str(COMPILE), "--step", "train_step"]) == 2
    assert "no range named so" in capsys.readouterr().err


def test_the_step_tables_breakdown_column_reads_a_profile():
    """benchmarks.model_measure.step_breakdown: the column the step table fills from each variant's --profile
    (its steps in step ranges, each with its lead-in)."""
    from benchmarks.model_measure import step_breakdown

    path = DATA / "step_h200_breakdown" / "llama3-8b-x1-segkit-auto.json.gz"
    got = step_breakdown(path)
    want = per_step(load(path))
    assert got["memory_bound"] == pytest.approx(want["memory-bound us"], abs=0.05)
    assert got["nvfuser_memory_bound"] > 0 and got["gemm"] > got["attention"] > 0
    assert got["lead_in"] == pytest.approx(want["lead-in us"], abs=0.051) and got["lead_in"] > 0  # rounded to 0.1


def _trace(ranges: list[Range]) -> Trace:
    kernels = [_k("nvjet_gemm", 100, 200, 10), _k("nvfuser_pointwise", 300, 50, 20)]
    return Trace("run.nsys-rep", "nsys", kernels, ranges, [])


def test_a_profile_without_step_ranges_is_refused_naming_its_ranges_and_the_way_out():
    """``segkit profile -- python model_step.py`` once gave a profile with no step range, and the breakdown read
    the whole 22-second process, weight initialisation included, as "1 step(s)"."""
    with pytest.raises(StepRangeError, match=r"run.nsys-rep: no range named 'step', so no step to read \(its "
                                             r"ranges: init\).*--whole"):
        per_step(_trace([Range("init", 0, 5000)]))
    assert per_step(_trace([Range("init", 0, 5000)]), whole=True)["steps"] == 1


def test_a_step_range_that_launched_no_kernel_is_refused_not_replaced_by_the_whole_profile():
    """One range of two launched nothing: the profile lacks that step's GPU work. Before, any range without kernels
    was dropped, and with none left the whole profile silently became the step."""
    with pytest.raises(StepRangeError, match=r"1 of 2 range\(s\) named 'step' launched no kernel \(the first, "
                                             r"step 2, opens at 2000 ns\)"):
        per_step(_trace([Range("step", 0, 90), Range("step", 2000, 2100)]))
    with pytest.raises(StepRangeError, match="1 of 1 range"):
        per_step(_trace([Range("step", 5000, 6000)]), whole=True)  # whole is for profiles without step ranges


def test_cli_breakdown_refuses_a_profile_without_steps_in_one_line(capsys):
    assert main(["trace", "breakdown", str(COMPILE)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no range named 'step'" in err and "--whole" in err, err


def test_breakdown_reads_20000_steps_in_one_pass():
    """Each step's kernels by a binary search over the kernels sorted once: 4000 steps took 45.9 s when each
    step scanned every kernel. 20000 steps of 3 kernels each: a quadratic reader would make 1.2e9 comparisons."""
    import time

    kernels, ranges = [], []
    for i in range(20000):
        t = i * 1000
        ranges.append(Range("step", t, t + 100, thread=1))
        kernels += [_k("nvjet_gemm", t + 200, 100, t + 10), _k("nvfuser_pointwise", t + 300, 50, t + 20),
                    _k("flash_fwd", t + 400, 50, t + 30)]
    trace = Trace("synthetic", "nsys", kernels, ranges, [])
    start = time.process_time()
    got = per_step(trace)
    assert time.process_time() - start < 20  # seconds of CPU: linear takes well under one here
    assert got["steps"] == 20000 and got["gemm kernels"] == 1 and got["step us"] == pytest.approx(0.450)


H200 = DATA / "step_h200_breakdown"


def test_a_step_counts_the_kernels_autograds_thread_launched_while_it_was_open():
    """The step table's torch.compile profile (H200, litgpt Llama-3-8B x1): autograd's engine launched the compiled
    backward from its own thread while the step's thread waited in backward(). Every kernel of the profile is in
    its one step (the step's own thread launched 16 of the 41), the backward's GEMMs and Triton kernels too."""
    trace = load(H200 / "llama3-8b-x1-compile.json.gz")
    (step,) = [r for r in trace.ranges if r.name == "step"]
    assert len(step.kernels) == 16 and len({k.thread for k in trace.kernels}) == 2
    got = per_step(trace)
    assert got["steps"] == 1 and sum(got[f"{k} kernels"] for k in KINDS) == len(trace.kernels) == 41
    triton = sum(k.duration_ns for k in trace.kernels if not any(m in k.name for m in ("nvjet", "cudnn"))) / 1e3
    assert got["memory-bound us"] == pytest.approx(triton, abs=0.05) and got["memory-bound us"] > 600
    segkit = per_step(load(H200 / "llama3-8b-x1-segkit-auto.json.gz"))  # Thunder launches on the step's thread
    assert sum(segkit[f"{k} kernels"] for k in KINDS) == 46 and segkit["nvfuser memory-bound us"] > 600


def test_compare_by_launch_refuses_a_pair_where_only_one_profile_has_step_ranges(capsys):
    """One profile's step against the other's whole process once doubled every kind, without a note: refused,
    naming the profile without steps; ``--whole`` reads it as one step, on purpose."""
    with_steps = DATA / "step_h200_breakdown" / "llama3-8b-x1-segkit-auto.json.gz"
    assert main(["trace", "compare", str(with_steps), str(COMPILE), "--by", "launch", "--format", "json"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{COMPILE}: no range named 'step'" in err, err
    assert main(["trace", "compare", str(with_steps), str(COMPILE), "--by", "launch", "--format", "json",
                 "--whole"]) == 0
    assert json.loads(capsys.readouterr().out)["launches"]
    assert main(["trace", "compare", str(with_steps), str(COMPILE), "--whole"]) == 2  # --whole goes with --by launch
    assert "--whole goes with --by launch or section" in capsys.readouterr().err
