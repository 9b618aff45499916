/*
 * test_dispatch.c — AUTO's dispatch model (src/dispatch/dispatch_model.h) on synthetic
 * calibrations: the modelled times against the formulas worked by hand, and the plan's choice of
 * CPU, GPU or a split, with the split at the balance point of the two sides.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "dispatch/dispatch_model.h"
#include "dualbatch.h"

/* A machine: 10 us a CPU call, 1 ns an arithmetic and 8 ns a special instruction per thread; a
 * GPU call 40 us, 20 GB/s each way, 1e-12 s per instruction per point at full occupancy
 * (compiled; the interpreter 4x that), 1e-9 s for one point alone; 30 us to split. */
static dual_calibration machine(void) {
  dual_calibration c = {0};
  c.threads = 16;
  c.cpu_call_s = 10e-6, c.cpu_arith_s = 1e-9, c.cpu_special_s = 8e-9;
  c.gpu = 1;
  c.gpu_call_s = 40e-6, c.gpu_in_Bps = 20e9, c.gpu_out_Bps = 20e9;
  c.gpu_arith_s[1] = 1e-12, c.gpu_special_s[1] = 8e-12, c.gpu_arith_s[0] = 4e-12, c.gpu_special_s[0] = 32e-12;
  c.gpu_lat_arith_s[1] = 1e-9, c.gpu_lat_special_s[1] = 8e-9, c.gpu_lat_arith_s[0] = 4e-9, c.gpu_lat_special_s[0] = 32e-9;
  c.split_call_s = 30e-6;
  return c;
}

/* A program of 100 arithmetic and 10 special instructions, its mode twice an eval on both
 * engines, 64-point CPU blocks, 1e5-point staging chunks, 128 bytes in and 256 out a point. */
static dual_call_shape shape(int64_t B) {
  dual_call_shape s = {0};
  s.B = B;
  s.arith = 100, s.special = 10, s.cpu_factor = 2, s.gpu_factor = 2;
  s.cpu_block = 64, s.gpu_chunk = 100000;
  s.in_bytes = 128, s.out_bytes = 256;
  s.gpu_tier = 1, s.cpu_scale = 1, s.gpu_scale = 1;
  return s;
}

static void near(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= 1e-12 * fabs(want) + 1e-18, "%s: %.17g, by hand %.17g", what, got, want);
}

Test(dispatch, cpu_time_counts_whole_blocks_per_thread) {
  const dual_calibration c = machine();
  const dual_call_shape s = shape(1000000);
  const double per = (100 * 1e-9 + 10 * 8e-9) * 2; /* 360 ns a point on one thread */
  /* 100 points on 16 threads: two blocks, one thread each: the slower takes 64 points */
  near(dual_model_cpu(&c, &s, 100, 16), 10e-6 + 64 * per, "B = 100");
  /* 40 points: one partial block */
  near(dual_model_cpu(&c, &s, 40, 16), 10e-6 + 40 * per, "B = 40");
  /* 1e6 points: 15625 blocks, ceil(15625 / 16) = 977 turns of 64 points */
  near(dual_model_cpu(&c, &s, 1000000, 16), 10e-6 + 977 * 64 * per, "B = 1e6");
  near(dual_model_cpu(&c, &s, 1000000, 1), 10e-6 + 1000000 * per, "B = 1e6, 1 thread");
  near(dual_model_cpu(&c, &s, 0, 16), 0.0, "B = 0");
}

Test(dispatch, gpu_time_is_latency_copies_and_kernel_overlapped) {
  const dual_calibration c = machine();
  dual_call_shape s = shape(1000000);
  /* 1 point: the kernel's latency (100 x 1 ns + 10 x 8 ns) x 2 = 360 ns, copies 384 B / 20 GB/s */
  near(dual_model_gpu(&c, &s, 1), 40e-6 + 360e-9 + 384 / 20e9, "B = 1");
  /* 1e6 points: kernel 1e6 x 360e-12 = 360 us, copies 1e6 x 384 / 20e9 = 19.2 ms, 10 chunks */
  near(dual_model_gpu(&c, &s, 1000000), 40e-6 + 19.2e-3 + 360e-6 / 10, "B = 1e6");
  s.gpu_tier = 0; /* the interpreter: 4x the kernel */
  near(dual_model_gpu(&c, &s, 1000000), 40e-6 + 19.2e-3 + 1440e-6 / 10, "B = 1e6, interpreted");
  s.gpu_scale = 2; /* measured twice the model */
  near(dual_model_gpu(&c, &s, 1000000), 40e-6 + 19.2e-3 + 2880e-6 / 10, "B = 1e6, scale 2");
}

Test(dispatch, without_the_gpu_figures_the_cpu) {
  dual_calibration c = machine();
  c.gpu = 0;
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &(dual_call_shape){.B = 1}, 16, &p);
  dual_call_shape s = shape(10000000);
  dual_dispatch_plan_call(&c, &s, 16, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_CPU);
  cr_assert_eq(p.gpu_points, 0);
}

Test(dispatch, small_batches_stay_on_the_cpu_large_ones_go_to_the_gpu) {
  dual_calibration c = machine();
  c.gpu_in_Bps = c.gpu_out_Bps = 1e12; /* copies free: the kernel decides */
  dual_dispatch_plan p;
  dual_call_shape s = shape(10);
  dual_dispatch_plan_call(&c, &s, 16, &p); /* CPU 10 us + 3.6 us against the GPU's 40 us */
  cr_assert_eq(p.device, DUAL_DEVICE_CPU, "B = 10: %g s CPU, %g s GPU", p.t_cpu, p.t_gpu);
  s = shape(10000000);
  dual_dispatch_plan_call(&c, &s, 16, &p); /* CPU 0.225 s, GPU 3.6 ms */
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "B = 1e7: %g s CPU, %g s GPU, split %g", p.t_cpu, p.t_gpu, p.t_split);
}

Test(dispatch, comparable_devices_split_at_the_balance_point) {
  /* a copy-bound GPU as fast as 15 CPU threads: kin's shape at 1e6 points on the device machine */
  dual_calibration c = machine();
  dual_call_shape s = shape(1000000);
  s.out_bytes = 8448, s.in_bytes = 256; /* 8704 B a point: 435 ns at 20 GB/s */
  s.cpu_factor = 2 * 435.2 / 360 * 16; /* one of 16 threads takes 16 x 435.2 ns a point */
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID, "CPU %g s, GPU %g s, split %g s", p.t_cpu, p.t_gpu, p.t_split);
  cr_assert(p.gpu_points % 64 == 0 && p.gpu_points > 0 && p.gpu_points < s.B);
  const double tg = dual_model_gpu(&c, &s, p.gpu_points), tc = dual_model_cpu(&c, &s, s.B - p.gpu_points, 15);
  /* balanced to within a block's time on either side */
  cr_assert(fabs(tg - tc) <= 64 * 16 * 435.2e-9 + 64 * 435.2e-9, "GPU side %g s, CPU side %g s", tg, tc);
  /* 15 CPU threads against a GPU as fast as 16: the GPU takes a little more than half */
  cr_assert(p.gpu_points > s.B / 2 && p.gpu_points < s.B * 6 / 10, "GPU share %lld", (long long)p.gpu_points);
  cr_assert(p.t_split < 0.6 * (p.t_cpu < p.t_gpu ? p.t_cpu : p.t_gpu));
  /* and no split is better by a block either way */
  for (int d = -1; d <= 1; d += 2) {
    const int64_t g = p.gpu_points + d * 64;
    const double a = dual_model_gpu(&c, &s, g), b = dual_model_cpu(&c, &s, s.B - g, 15);
    cr_assert((a > b ? a : b) + c.split_call_s >= p.t_split - 1e-15, "g %lld beats the plan", (long long)g);
  }
}

Test(dispatch, no_split_on_one_thread_or_when_the_gain_is_small) {
  dual_calibration c = machine();
  dual_call_shape s = shape(1000000);
  s.out_bytes = 8448, s.in_bytes = 256;
  s.cpu_factor = 2 * 435.2 / 360 * 16;
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 1, &p); /* one thread: the split would have no CPU thread */
  cr_assert_neq(p.device, DUAL_DEVICE_HYBRID);
  /* a GPU 20x the CPU: a split would save under 10 % */
  s.cpu_factor *= 20;
  dual_dispatch_plan_call(&c, &s, 16, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "CPU %g, GPU %g, split %g", p.t_cpu, p.t_gpu, p.t_split);
  cr_assert(p.t_split * 1.1 >= p.t_gpu);
  /* tiny batches: the split's thread costs more than it saves */
  s = shape(128);
  s.out_bytes = 8448;
  dual_dispatch_plan_call(&c, &s, 16, &p);
  cr_assert_neq(p.device, DUAL_DEVICE_HYBRID, "B = 128: CPU %g, GPU %g, split %g", p.t_cpu, p.t_gpu, p.t_split);
}

Test(dispatch, measured_scales_move_the_choice) {
  dual_calibration c = machine();
  c.gpu_in_Bps = c.gpu_out_Bps = 1e12;
  dual_call_shape s = shape(2000);
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, &p); /* CPU: 10 us + 2 x 64 x 360 ns = 56 us; GPU 40.7 us */
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "CPU %g, GPU %g", p.t_cpu, p.t_gpu);
  s.gpu_scale = 100; /* the GPU measured 100x slower than modelled on this program */
  dual_dispatch_plan_call(&c, &s, 16, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_CPU, "CPU %g, GPU %g", p.t_cpu, p.t_gpu);
}
