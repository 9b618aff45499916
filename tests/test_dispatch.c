/*
 * test_dispatch.c — AUTO's dispatch model (src/dispatch/dispatch_model.h) on synthetic
 * calibrations: the modelled times against the formulas worked by hand, and the plan's choice of
 * CPU, GPU or a split, with the split at the balance point of the two sides.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_model.h"
#include "dualbatch.h"

/* A machine: 10 us a CPU call, 1 ns an arithmetic and 8 ns a special instruction per thread; a
 * GPU call 40 us, 20 GB/s each way staged by 16 threads (one thread: 20 GB/s too), 1e-12 s per
 * instruction per point at full occupancy (compiled; the interpreter 4x that), 1e-9 s for one
 * point alone; 30 us to split. */
static dual_calibration machine(void) {
  dual_calibration c = {0};
  c.threads = 16;
  c.cpu_call_s = 10e-6, c.cpu_arith_s = 1e-9, c.cpu_special_s = 8e-9;
  c.gpu = 1;
  c.gpu_call_s = 40e-6, c.gpu_in_Bps = 20e9, c.gpu_out_Bps = 20e9, c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 20e9;
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

/* kin's shape at 1e6 points on the device machine: 8704 B a point (435.2 ns at 20 GB/s), one of
 * 16 CPU threads 16 x 435.2 ns a point, so a copy-bound GPU as fast as the 16 threads. */
static dual_call_shape kin_like(void) {
  dual_call_shape s = shape(1000000);
  s.out_bytes = 8448, s.in_bytes = 256;
  s.cpu_factor = 2 * 435.2 / 360 * 16;
  return s;
}

static void near(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= 1e-12 * fabs(want) + 1e-18, "%s: %.17g, by hand %.17g", what, got, want);
}

Test(dispatch, cpu_time_counts_whole_blocks_per_thread) {
  const dual_calibration c = machine();
  const dual_call_shape s = shape(1000000);
  const double per = (100 * 1e-9 + 10 * 8e-9) * 2; /* 360 ns a point on one thread */
  /* 100 points on 16 threads, short of a 64-point block per thread: 16-point blocks, one per
   * thread, the slowest 16 points */
  near(dual_model_cpu(&c, &s, 100, 16), 10e-6 + 16 * per, "B = 100");
  near(dual_model_cpu(&c, &s, 40, 16), 10e-6 + 16 * per, "B = 40");
  near(dual_model_cpu(&c, &s, 40, 1), 10e-6 + 40 * per, "B = 40, 1 thread: one partial block");
  /* 2000 points: 32 blocks of 64, two turns */
  near(dual_model_cpu(&c, &s, 2000, 16), 10e-6 + 128 * per, "B = 2000");
  /* 1e6 points: 15625 blocks, ceil(15625 / 16) = 977 turns of 64 points */
  near(dual_model_cpu(&c, &s, 1000000, 16), 10e-6 + 977 * 64 * per, "B = 1e6");
  near(dual_model_cpu(&c, &s, 1000000, 1), 10e-6 + 1000000 * per, "B = 1e6, 1 thread");
  near(dual_model_cpu(&c, &s, 0, 16), 0.0, "B = 0");
}

Test(dispatch, gpu_time_is_latency_copies_and_kernel_overlapped) {
  dual_calibration c = machine();
  dual_call_shape s = shape(1000000);
  /* 1 point: the kernel's latency (100 x 1 ns + 10 x 8 ns) x 2 = 360 ns, copies 384 B / 20 GB/s */
  near(dual_model_gpu(&c, &s, 1, 16), 40e-6 + 360e-9 + 384 / 20e9, "B = 1");
  /* 1e6 points: kernel 1e6 x 360e-12 = 360 us, copies 1e6 x 384 / 20e9 = 19.2 ms, 10 chunks */
  near(dual_model_gpu(&c, &s, 1000000, 16), 40e-6 + 19.2e-3 + 360e-6 / 10, "B = 1e6");
  /* staged by 2 threads of 5 GB/s each way: 10 GB/s, copies 38.4 ms */
  c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 5e9;
  near(dual_model_gpu(&c, &s, 1000000, 2), 40e-6 + 38.4e-3 + 360e-6 / 10, "B = 1e6, 2 staging threads");
  /* 8 threads would give 40 GB/s: all threads' 20 GB/s is the most */
  near(dual_model_gpu(&c, &s, 1000000, 8), 40e-6 + 19.2e-3 + 360e-6 / 10, "B = 1e6, 8 staging threads");
  s.gpu_tier = 0; /* the interpreter: 4x the kernel */
  near(dual_model_gpu(&c, &s, 1000000, 16), 40e-6 + 19.2e-3 + 1440e-6 / 10, "B = 1e6, interpreted");
  s.gpu_scale = 2; /* measured twice the model: its varying part, copies and kernel */
  near(dual_model_gpu(&c, &s, 1000000, 16), 40e-6 + 2 * (19.2e-3 + 1440e-6 / 10), "B = 1e6, scale 2");
}

Test(dispatch, without_the_gpu_figures_the_cpu) {
  dual_calibration c = machine();
  c.gpu = 0;
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &(dual_call_shape){.B = 1}, 16, NULL, 0, &p);
  dual_call_shape s = shape(10000000);
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_CPU);
  cr_assert_eq(p.gpu_points, 0);
}

Test(dispatch, small_batches_stay_on_the_cpu_large_ones_go_to_the_gpu) {
  dual_calibration c = machine();
  c.gpu_in_Bps = c.gpu_out_Bps = 1e12; /* copies free: the kernel decides */
  dual_dispatch_plan p;
  dual_call_shape s = shape(10);
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p); /* CPU 10 us + 3.6 us against the GPU's 40 us */
  cr_assert_eq(p.device, DUAL_DEVICE_CPU, "B = 10: %g s CPU, %g s GPU", p.t_cpu, p.t_gpu);
  s = shape(10000000);
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p); /* CPU 0.225 s, GPU 3.6 ms */
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "B = 1e7: %g s CPU, %g s GPU, split %g", p.t_cpu, p.t_gpu, p.t_split);
}

Test(dispatch, comparable_devices_split_at_the_balance_point) {
  /* a copy-bound GPU as fast as 15 CPU threads: kin's shape at 1e6 points on the device machine */
  dual_calibration c = machine();
  dual_call_shape s = kin_like();
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID, "CPU %g s, GPU %g s, split %g s", p.t_cpu, p.t_gpu, p.t_split);
  cr_assert(p.gpu_points % 64 == 0 && p.gpu_points > 0 && p.gpu_points < s.B);
  /* one thread stages as fast as all: the GPU's side takes one */
  cr_assert_eq(p.gpu_threads, 1);
  const double tg = dual_model_gpu(&c, &s, p.gpu_points, 1), tc = dual_model_cpu(&c, &s, s.B - p.gpu_points, 15);
  /* balanced to within a block's time on either side */
  cr_assert(fabs(tg - tc) <= 64 * 16 * 435.2e-9 + 64 * 435.2e-9, "GPU side %g s, CPU side %g s", tg, tc);
  /* 15 CPU threads against a GPU as fast as 16: the GPU takes a little more than half */
  cr_assert(p.gpu_points > s.B / 2 && p.gpu_points < s.B * 6 / 10, "GPU share %lld", (long long)p.gpu_points);
  cr_assert(p.t_split < 0.6 * (p.t_cpu < p.t_gpu ? p.t_cpu : p.t_gpu));
  /* and no split is better by a block either way */
  for (int d = -1; d <= 1; d += 2) {
    const int64_t g = p.gpu_points + d * 64;
    const double a = dual_model_gpu(&c, &s, g, 1), b = dual_model_cpu(&c, &s, s.B - g, 15);
    cr_assert((a > b ? a : b) + c.split_call_s >= p.t_split - 1e-15, "g %lld beats the plan", (long long)g);
  }
}

Test(dispatch, a_copy_bound_split_gives_the_gpu_side_the_staging_threads_it_needs) {
  /* the same shape, one staging thread at 4 GB/s each way: with k threads the GPU side copies at
   * min(4k, 20) GB/s and the CPU side has 16 - k threads */
  dual_calibration c = machine();
  c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 4e9;
  dual_call_shape s = kin_like();
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID, "CPU %g s, GPU %g s, split %g s", p.t_cpu, p.t_gpu, p.t_split);
  /* by hand: a point takes 8704 B / min(4k, 20) GB/s on the GPU side (its kernel hides under
   * the copies) and 16 x 435.2 ns = 6.9632 us on one CPU thread, so balanced sides go at
   * (16 - k) / 6.9632 + min(4k, 20) x 1000 / 8704 points per us:
   *   k = 1: 2.1542 + 0.4596 = 2.6138     k = 4: 1.7233 + 1.8382 = 3.5615 (the best)
   *   k = 2: 2.0106 + 0.9191 = 2.9297     k = 8: 1.1489 + 2.2978 = 3.4467
   * 1e6 points: 0.2808 s */
  cr_assert_eq(p.gpu_threads, 4, "%d staging threads", p.gpu_threads);
  cr_assert(fabs(p.t_split - 1e6 / 3.5615e6) < 0.005 * p.t_split, "split %g s", p.t_split);
  cr_assert(fabs(dual_model_gpu(&c, &s, p.gpu_points, 4) - dual_model_cpu(&c, &s, s.B - p.gpu_points, 12)) < 1e-3);
}

Test(dispatch, no_split_on_one_thread_or_when_the_gain_is_small) {
  dual_calibration c = machine();
  dual_call_shape s = kin_like();
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 1, NULL, 0, &p); /* one thread: the split would have no CPU thread */
  cr_assert_neq(p.device, DUAL_DEVICE_HYBRID);
  /* a GPU 20x the CPU: a split would save under 10 % */
  s.cpu_factor *= 20;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "CPU %g, GPU %g, split %g", p.t_cpu, p.t_gpu, p.t_split);
  cr_assert(p.t_split * 1.1 >= p.t_gpu);
  /* tiny batches: the split's thread costs more than it saves */
  s = shape(128);
  s.out_bytes = 8448;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_neq(p.device, DUAL_DEVICE_HYBRID, "B = 128: CPU %g, GPU %g, split %g", p.t_cpu, p.t_gpu, p.t_split);
}

/* A split seen at B points with k staging threads, g of them on the GPU's side: each side's time
 * its device's fixed cost and a rate per point (so its history predicts that line). */
static dual_split_seen seen_split(const dual_calibration *c, int64_t B, int k, double gpu_rate, double cpu_rate) {
  dual_split_seen m;
  memset(&m, 0, sizeof m);
  const int64_t g = B / 2;
  m.B = B, m.k = k;
  cr_assert(dual_history_add(&m.gpu, c->gpu_call_s, (double)g, c->gpu_call_s + (double)g * gpu_rate));
  cr_assert(dual_history_add(&m.cpu, c->cpu_call_s, (double)(B - g), c->cpu_call_s + (double)(B - g) * cpu_rate));
  return m;
}

Test(dispatch, a_measured_split_stands_for_the_model) {
  /* the model splits kin-like calls (comparable_devices_split_at_the_balance_point) */
  dual_calibration c = machine();
  dual_call_shape s = kin_like();
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID);
  /* a split seen at 2e6 points with 2 staging threads: 1 us a point on the GPU's side and 3 us on
   * the CPU's (each slowed by the other).  Balanced: 40 us + g x 1 us = 10 us + (1e6 - g) x 3 us,
   * g = 749992.5 -> 750016 (the nearest whole block of 64), the GPU's side the longer: 0.75 s
   * with the split's 30 us, slower than the GPU alone (0.435 s), so the GPU */
  const dual_split_seen seen = seen_split(&c, 2000000, 2, 1e-6, 3e-6);
  dual_dispatch_plan_call(&c, &s, 16, &seen, 1, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "split %g s, GPU %g s", p.t_split, p.t_gpu);
  near(p.t_split, 40e-6 + 750016 * 1e-6 + 30e-6, "the seen split's time");
  /* the same sides ten times faster: that split, its k and share */
  const dual_split_seen fast = seen_split(&c, 2000000, 2, 1e-7, 3e-7);
  dual_dispatch_plan_call(&c, &s, 16, &fast, 1, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID);
  cr_assert(p.gpu_threads == 2 && p.gpu_points % 64 == 0 && llabs(p.gpu_points - 750000) < 64, "g %lld k %d",
            (long long)p.gpu_points, p.gpu_threads);
  near(dual_split_seen_sides(&c, &fast, s.B, p.gpu_points), p.t_split, "the sides' time at the balance");
  /* its splits took 1.2, 1.5 and 1.3x what their sides predicted: the same balance, 1.3x the time */
  dual_split_seen slower = fast;
  dual_ratios_add(&slower.over, 1.2, 1.0), dual_ratios_add(&slower.over, 1.5, 1.0);
  dual_ratios_add(&slower.over, 1.3, 1.0);
  dual_dispatch_plan q;
  dual_dispatch_plan_call(&c, &s, 16, &slower, 1, &q);
  cr_assert_eq(q.split_points, p.split_points);
  near(q.t_split, 1.3 * p.t_split, "the split at its measured ratio");
  /* a measured split needs only DUAL_PLAN_MIN_MEASURED_SPLIT_GAIN_PCT (8 %): sides of equal
   * rate p balance at g = B / 2 - 30 us / (2 p), t = 40 us + g p + 30 us; 10 % faster than the
   * better device is taken, 5 % is not */
  const double single = p.t_cpu < p.t_gpu ? p.t_cpu : p.t_gpu;
  for (int pct = 5; pct <= 10; pct += 5) {
    const double t = (1.0 - pct / 100.0) * single, rate = 2.0 * (t - 70e-6 + 15e-6) / 1e6;
    const dual_split_seen close = seen_split(&c, 1000000, 4, rate, rate);
    dual_dispatch_plan_call(&c, &s, 16, &close, 1, &p);
    cr_assert(p.split_measured && fabs(p.t_split - t) < 3e-4 * t, "%d %%: split %g s, by hand %g s", pct, p.t_split, t);
    cr_assert_eq(p.device == DUAL_DEVICE_HYBRID, pct == 10, "%d %% faster: device %d", pct, p.device);
  }
  /* seen at a batch over 4x away: the model's split again */
  const dual_split_seen far = seen_split(&c, 5000000, 2, 1e-6, 3e-6);
  dual_dispatch_plan_call(&c, &s, 16, &far, 1, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID);
  cr_assert_eq(p.gpu_threads, 1);
}

Test(dispatch, measured_scales_move_the_choice) {
  dual_calibration c = machine();
  c.gpu_in_Bps = c.gpu_out_Bps = 1e12;
  dual_call_shape s = shape(2000);
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p); /* CPU: 10 us + 2 x 64 x 360 ns = 56 us; GPU 40.7 us */
  cr_assert_eq(p.device, DUAL_DEVICE_GPU, "CPU %g, GPU %g", p.t_cpu, p.t_gpu);
  s.gpu_scale = 100; /* the GPU measured 100x slower than modelled on this program */
  dual_dispatch_plan_call(&c, &s, 16, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_CPU, "CPU %g, GPU %g", p.t_cpu, p.t_gpu);
}

/* ---- the calibration: text form, measurement, disk entry --------------------------------- */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/calibration.h"
#include "jit/jit_cache.h"
#include "jit/sha256.h"
#include "temp_dirs.h"

Test(calibration, text_round_trip_and_refusals) {
  dual_calibration c = machine(), r;
  c.cpu_arith_s = 1.0 / 3.0e9; /* needs all 17 digits */
  char text[2048];
  cr_assert_eq(dual_calibration_format(&c, text, sizeof text), 0);
  cr_assert_eq(dual_calibration_parse(text, strlen(text), &r), 0, "%s", text);
  cr_assert(memcmp(&c, &r, sizeof c) == 0, "the round trip changed a figure:\n%s", text);
  cr_assert_eq(dual_calibration_format(&c, text, 64), -1, "a short buffer is refused");
  /* refusals: another version, a missing, repeated, malformed, negative or non-finite figure */
  const char *edits[][2] = {{"calibration 2", "calibration 1"}, {"gpu_in_Bps", "gpu_in_XXX"},
                            {"cpu_call_s 1", "cpu_call_s -1"}, {"cpu_call_s 1", "cpu_call_s x"},
                            {"split_call_s 3", "split_call_s nan #"}, {"threads 16", "threads 0"}};
  for (size_t k = 0; k < sizeof edits / sizeof *edits; ++k) {
    char bad[2048];
    cr_assert_eq(dual_calibration_format(&c, bad, sizeof bad), 0);
    char *at = strstr(bad, edits[k][0]);
    cr_assert_not_null(at, "edit %zu: '%s' not in\n%s", k, edits[k][0], bad);
    char tail[2048];
    snprintf(tail, sizeof tail, "%s%s", edits[k][1], at + strlen(edits[k][0]));
    strcpy(at, tail);
    cr_assert_eq(dual_calibration_parse(bad, strlen(bad), &r), -1, "edit %zu accepted:\n%s", k, bad);
  }
  char dup[4096];
  snprintf(dup, sizeof dup, "%scpu_call_s 1\n", text);
  cr_assert_eq(dual_calibration_parse(dup, strlen(dup), &r), -1, "a repeated figure is refused");
  /* without the GPU, its figures may be zero */
  c.gpu = 0;
  memset(c.gpu_arith_s, 0, sizeof c.gpu_arith_s), c.gpu_call_s = 0;
  cr_assert_eq(dual_calibration_format(&c, text, sizeof text), 0);
  cr_assert_eq(dual_calibration_parse(text, strlen(text), &r), 0, "%s", text);
}

Test(calibration, cpu_figures_are_measured) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  dual_calibration c;
  memset(&c, 0, sizeof c);
  cr_assert_eq(dual_calibration_measure_cpu(ctx, 2, &c), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_log_info("2 threads: call %g s, arith %g s, special %g s", c.cpu_call_s, c.cpu_arith_s, c.cpu_special_s);
  cr_assert_eq(c.threads, 2);
  cr_assert(c.cpu_call_s > 0 && c.cpu_call_s < 1.0, "call %g s", c.cpu_call_s);
  /* an instruction takes between 10 ps and 10 us a point on any machine this runs on */
  cr_assert(c.cpu_arith_s > 1e-11 && c.cpu_arith_s < 1e-5, "arith %g s", c.cpu_arith_s);
  cr_assert(c.cpu_special_s >= c.cpu_arith_s && c.cpu_special_s < 1e-5, "special %g s", c.cpu_special_s);
  cr_assert_eq(c.gpu, 0);
  dual_context_destroy(&ctx);
}

/* The entry's file in dir for the context's key. */
static void entry_path(const dual_context *ctx, const char *dir, int threads, char *path, size_t cap) {
  uint8_t key[32];
  char hex[65];
  dual_calibration_key(ctx, threads, key);
  dual_sha256_hex(key, hex);
  snprintf(path, cap, "%s/%s.cubin", dir, hex);
}

Test(calibration, stored_entry_is_used_and_a_damaged_one_is_measured_again) {
  char dir[256];
  cr_assert_eq(dual_test_temp_dir(dir, sizeof dir, "calib"), 0);
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_cache_dir(ctx, dir), DUAL_SUCCESS);
  /* plant an entry with figures no measurement gives (a 123 s call) */
  dual_calibration planted = machine();
  planted.threads = 2, planted.gpu = 0, planted.cpu_call_s = 123.0;
  char text[2048];
  cr_assert_eq(dual_calibration_format(&planted, text, sizeof text), 0);
  uint8_t key[32];
  dual_calibration_key(ctx, 2, key);
  cr_assert_eq(dual_jit_cache_store(dir, key, text, strlen(text), NULL), 0);
  dual_calibration c;
  cr_assert_eq(dual_calibration_get(ctx, 2, 0, &c), DUAL_SUCCESS);
  cr_assert_eq(c.cpu_call_s, 123.0, "the stored entry was not used: %g", c.cpu_call_s);
  /* the same context keeps its copy; another thread count is another entry (measured) */
  cr_assert_eq(dual_calibration_get(ctx, 2, 0, &c), DUAL_SUCCESS);
  cr_assert_eq(c.cpu_call_s, 123.0);
  cr_assert_eq(dual_calibration_get(ctx, 1, 0, &c), DUAL_SUCCESS);
  cr_assert(c.cpu_call_s < 1.0 && c.threads == 1);
  dual_context_destroy(&ctx);
  /* damage the entry's last byte: a fresh context measures again and replaces it */
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_cache_dir(ctx, dir), DUAL_SUCCESS);
  char path[4300];
  entry_path(ctx, dir, 2, path, sizeof path);
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f, "no entry at %s", path);
  cr_assert_eq(fseek(f, -2, SEEK_END), 0);
  const int ch = fgetc(f);
  cr_assert_eq(fseek(f, -2, SEEK_END), 0);
  fputc(ch ^ 0x01, f);
  fclose(f);
  cr_assert_eq(dual_calibration_get(ctx, 2, 0, &c), DUAL_SUCCESS);
  cr_assert(c.cpu_call_s < 1.0, "the damaged entry was used: call %g s", c.cpu_call_s);
  void *image = NULL;
  size_t size = 0;
  dual_calibration r;
  cr_assert_eq(dual_jit_cache_load(dir, key, &image, &size, NULL), 0, "the entry was not replaced");
  cr_assert_eq(dual_calibration_parse(image, size, &r), 0);
  cr_assert(memcmp(&r, &c, sizeof r) == 0, "the replacement is not the measured calibration");
  free(image);
  /* force: measured again although the entry is good */
  dual_calibration again;
  cr_assert_eq(dual_calibration_get(ctx, 2, 1, &again), DUAL_SUCCESS);
  cr_assert(again.cpu_call_s < 1.0);
  dual_context_destroy(&ctx);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* ---- the split call ------------------------------------------------------------------------ */

#include "dispatch/split.h"
#include "exec.h"

static int cpu_engine(dual_context *ctx, const dual_job *job) {
  return dual_mode_is_second_order(job->mode) ? dual_cpu_run2(ctx, job) : dual_cpu_run(ctx, job);
}

/* A split run of mode on prog equals the whole run bit for bit, at every cut. */
static void split_equals_whole(const char *source, int mode, int width) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, source, "split", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  enum { B = 300 };
  static double x[B * 8], y0[B * 8], y1[B * 8], d0[B * 64], d1[B * 64], h0[B * 512], h1[B * 512];
  int32_t s0[B], s1[B];
  for (int i = 0; i < B * n; ++i) x[i] = 0.3 + 0.01 * (i % 37);
  dual_batch b0, b1;
  dual_batch_init(&b0);
  b0.count = B, b0.x = x, b0.x_ps = n, b0.x_es = 1, b0.y = y0, b0.y_ps = m, b0.y_es = 1, b0.status = s0;
  b0.point0 = 1000;
  if (mode != DUAL_MODE_EVAL) b0.d = d0, b0.d_ps = m * n, b0.d_rs = n, b0.d_cs = 1;
  if (mode == DUAL_MODE_HESSIAN) b0.h = h0, b0.h_ps = m * n * n, b0.h_rs = n * n, b0.h_es = 1;
  b1 = b0, b1.y = y1, b1.status = s1, b1.d = b0.d ? d1 : NULL, b1.h = b0.h ? h1 : NULL;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b0, job.mode = mode, job.width = width, job.threads = 2, job.seed = 7;
  job.point0 = b0.point0;
  cr_assert_eq(cpu_engine(ctx, &job), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  const int cuts[] = {1, 64, 150, 299};
  for (size_t k = 0; k < sizeof cuts / sizeof *cuts; ++k) {
    memset(y1, 0xff, sizeof y1), memset(d1, 0xff, sizeof d1), memset(h1, 0xff, sizeof h1), memset(s1, 0xff, sizeof s1);
    job.b = &b1;
    int sa, sr;
    double ta, tr;
    cr_assert_eq(dual_run_split(ctx, &job, cuts[k], cpu_engine, cpu_engine, 1, 1, &sa, &sr, &ta, &tr), DUAL_SUCCESS);
    cr_assert(sa == DUAL_SUCCESS && sr == DUAL_SUCCESS && ta >= 0 && tr >= 0);
    cr_assert(memcmp(y0, y1, sizeof(double) * B * m) == 0, "cut %d: y differs", cuts[k]);
    cr_assert(memcmp(s0, s1, sizeof(int32_t) * B) == 0, "cut %d: statuses differ", cuts[k]);
    if (b0.d) cr_assert(memcmp(d0, d1, sizeof(double) * B * m * n) == 0, "cut %d: d differs", cuts[k]);
    if (b0.h) cr_assert(memcmp(h0, h1, sizeof(double) * B * m * n * n) == 0, "cut %d: h differs", cuts[k]);
    job.b = &b0;
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(split, a_split_call_gives_the_whole_calls_bits) {
  /* a Jacobian; draws that depend on the point's index (point0 carried into each side); a Hessian */
  split_equals_whole("input x[3]\noutput a = x[0] * exp(x[1]) - log(x[2])\noutput b = sin(x[0] * x[2])\n",
                     DUAL_MODE_JACOBIAN, 2);
  split_equals_whole("input x[2]\noutput a = x[0] + normal() * x[1]\noutput b = uniform() * x[0]\n",
                     DUAL_MODE_EVAL, 0);
  split_equals_whole("input x[4]\noutput f = exp(x[0] * x[1]) + x[2] ^ 3 / (1 + x[3] ^ 2)\n",
                     DUAL_MODE_HESSIAN, 32);
}

Test(split, slices_keep_absent_arrays_absent) {
  double x[20], y[10];
  dual_batch b, s;
  dual_batch_init(&b);
  b.count = 10, b.x = x, b.x_ps = 2, b.x_es = 1, b.y = y, b.y_ps = 1, b.y_es = 1, b.point0 = 5;
  dual_batch_slice(&b, 4, 6, &s);
  cr_assert(s.x == x + 8 && s.y == y + 4 && s.count == 6 && s.point0 == 9);
  cr_assert(s.p == NULL && s.d == NULL && s.h == NULL && s.u == NULL && s.v == NULL && s.status == NULL);
}

/* ---- a call cut in k parts, over CPU contexts standing for k devices (the runner of a context
 * over several GPUs) ---------------------------------------------------------------------- */

#include "context.h"

static int failing_part(dual_context *ctx, const dual_job *job) {
  (void)job;
  return dual_fail(ctx, DUAL_ERR_DEVICE, "simulated device failed");
}

Test(split, parts_over_simulated_devices_give_the_whole_calls_bits) {
  enum { B = 1000, K = 5 };
  dual_context *dev[K];
  for (int i = 0; i < K; ++i) {
    cr_assert_eq(dual_context_create(&dev[i], DUAL_DEVICE_CPU), DUAL_SUCCESS);
    cr_assert_eq(dual_context_set_threads(dev[i], 1), DUAL_SUCCESS);
  }
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(dev[0], "input x[3]\noutput a = x[0] * exp(x[1]) + normal() * x[2]\n"
                                            "output b = sin(x[0] * x[2]) - uniform()\n", "parts", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(dev[0]));
  static double x[B * 3], y0[B * 2], y1[B * 2], d0[B * 6], d1[B * 6];
  int32_t s0[B], s1[B];
  for (int i = 0; i < B * 3; ++i) x[i] = -1.0 + 0.002 * (i % 997);
  dual_batch b0, b1;
  dual_batch_init(&b0);
  b0.count = B, b0.x = x, b0.x_ps = 3, b0.x_es = 1, b0.y = y0, b0.y_ps = 2, b0.y_es = 1, b0.status = s0;
  b0.d = d0, b0.d_ps = 6, b0.d_rs = 3, b0.d_cs = 1, b0.point0 = 40;
  b1 = b0, b1.y = y1, b1.d = d1, b1.status = s1;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b0, job.mode = DUAL_MODE_JACOBIAN, job.width = 2, job.threads = 1, job.seed = 11;
  job.point0 = b0.point0;
  cr_assert_eq(cpu_engine(dev[0], &job), DUAL_SUCCESS, "%s", dual_context_last_error(dev[0]));
  job.b = &b1;
  const dual_engine_fn fn[K] = {cpu_engine, cpu_engine, cpu_engine, cpu_engine, cpu_engine};
  const int threads[K] = {1, 1, 2, 1, 1};
  const double rates[K] = {1.0, 2.0, 0.0, NAN, 4.0}; /* two not yet measured: the mean's share */
  int64_t shares[K];
  dual_split_shares(B, K, rates, 64, shares);
  const int64_t layouts[3][K] = {{shares[0], shares[1], shares[2], shares[3], shares[4]},
                                 {0, 300, 0, 700, 0}, /* parts of no points are not run */
                                 {1, 1, 1, 1, B - 4}};
  for (int l = 0; l < 3; ++l) {
    memset(y1, 0xff, sizeof y1), memset(d1, 0xff, sizeof d1), memset(s1, 0xff, sizeof s1);
    int st[K];
    double secs[K];
    cr_assert_eq(dual_run_parts(dev[0], &job, K, layouts[l], dev, fn, threads, st, secs), DUAL_SUCCESS, "%s",
                 dual_context_last_error(dev[0]));
    for (int i = 0; i < K; ++i) cr_assert(st[i] == DUAL_SUCCESS && secs[i] >= 0.0, "layout %d part %d", l, i);
    cr_assert(memcmp(y0, y1, sizeof y0) == 0 && memcmp(d0, d1, sizeof d0) == 0 && memcmp(s0, s1, sizeof s0) == 0,
              "layout %d: the parts' results differ from the whole call's", l);
  }
  /* a failing part: its status and its message come back, the others' statuses are theirs */
  const dual_engine_fn bad[K] = {cpu_engine, cpu_engine, failing_part, cpu_engine, cpu_engine};
  int st[K];
  double secs[K];
  cr_assert_eq(dual_run_parts(dev[0], &job, K, layouts[0], dev, bad, threads, st, secs), DUAL_ERR_DEVICE);
  cr_assert_str_eq(dual_context_last_error(dev[0]), "simulated device failed");
  cr_assert(st[0] == DUAL_SUCCESS && st[1] == DUAL_SUCCESS && st[2] == DUAL_ERR_DEVICE && st[4] == DUAL_SUCCESS);
  /* counts that do not cover the batch: refused, nothing run */
  const int64_t short_by_one[K] = {200, 200, 200, 200, 199};
  cr_assert_eq(dual_run_parts(dev[0], &job, K, short_by_one, dev, fn, threads, st, secs), DUAL_ERR_INTERNAL);
  dual_program_destroy(&prog);
  for (int i = 0; i < K; ++i) dual_context_destroy(&dev[i]);
}

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* One task of dual_run_tasks: the thread it ran on, and whether it saw every task of its call
 * running at once (each waits, up to 5 s, until all have arrived). */
typedef struct task_probe {
  atomic_int *arrived;
  int k, fail, all_at_once, runs;
  pthread_t thread;
} task_probe;

static int probe_task(void *arg) {
  task_probe *t = (task_probe *)arg;
  t->thread = pthread_self();
  t->runs++;
  atomic_fetch_add(t->arrived, 1);
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    if (atomic_load(t->arrived) >= t->k) {
      t->all_at_once = 1;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) < 5.0);
  return t->fail ? DUAL_ERR_DEVICE : DUAL_SUCCESS;
}

/* dual_run_tasks (the solvers' shares over several GPUs): k tasks run at once, each once, on
 * threads other than the caller's and each other's, kept from call to call; each task's status
 * comes back in its slot (a failing one does not stop the others), and a count out of range runs
 * nothing. */
Test(split, tasks_run_at_once_on_their_own_kept_threads) {
  enum { K = 4 };
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  pthread_t first[K];
  for (int call = 0; call < 2; ++call) {
    atomic_int arrived = 0;
    task_probe t[K];
    void *args[K];
    for (int i = 0; i < K; ++i) t[i] = (task_probe){&arrived, K, i == 2, 0, 0, pthread_self()}, args[i] = &t[i];
    int st[K];
    double secs[K];
    cr_assert_eq(dual_run_tasks(ctx, K, probe_task, args, st, secs), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    for (int i = 0; i < K; ++i) {
      cr_assert_eq(t[i].runs, 1, "call %d: task %d ran %d times", call, i, t[i].runs);
      cr_assert(t[i].all_at_once, "call %d: task %d did not see the %d tasks at once", call, i, K);
      cr_assert_eq(st[i], i == 2 ? DUAL_ERR_DEVICE : DUAL_SUCCESS, "call %d: task %d's status", call, i);
      cr_assert(secs[i] >= 0.0, "call %d: task %d's seconds %g", call, i, secs[i]);
      cr_assert(!pthread_equal(t[i].thread, pthread_self()), "call %d: task %d ran on the caller's thread", call, i);
      for (int j = 0; j < i; ++j)
        cr_assert(!pthread_equal(t[i].thread, t[j].thread), "call %d: tasks %d and %d shared a thread", call, j, i);
      if (call == 0) first[i] = t[i].thread;
      else cr_assert(pthread_equal(t[i].thread, first[i]), "task %d: a new thread on the second call", i);
    }
  }
  int st[1];
  double secs[1];
  void *none[1] = {NULL};
  cr_assert_eq(dual_run_tasks(ctx, 0, probe_task, none, st, secs), DUAL_ERR_INTERNAL);
  cr_assert_eq(dual_run_tasks(ctx, DUAL_SPLIT_MAX_PARTS + 1, probe_task, none, st, secs), DUAL_ERR_INTERNAL);
  dual_context_destroy(&ctx);
}

Test(split, shares_follow_the_rates) {
  int64_t c[DUAL_SPLIT_MAX_PARTS], again[DUAL_SPLIT_MAX_PARTS];
  const double r112[3] = {1, 1, 2};
  dual_split_shares(100000, 3, r112, 256, c);
  cr_assert_eq(c[0] + c[1] + c[2], 100000);
  cr_assert(c[0] % 256 == 0 && (c[0] + c[1]) % 256 == 0, "the cuts fall on multiples of the quantum");
  cr_assert(llabs(c[0] - 25000) <= 128 && llabs(c[0] + c[1] - 50000) <= 128, "%lld %lld %lld",
            (long long)c[0], (long long)c[1], (long long)c[2]);
  dual_split_shares(100000, 3, r112, 256, again);
  cr_assert(memcmp(c, again, sizeof(int64_t) * 3) == 0, "the same inputs, the same counts");
  const double none[3] = {NAN, 0.0, -1.0}; /* nothing measured: even shares */
  dual_split_shares(99999, 3, none, 1, c);
  cr_assert(c[0] == 33333 && c[1] == 33333 && c[2] == 33333);
  const double one_known[2] = {3.0, INFINITY}; /* an unusable rate stands for the others' mean */
  dual_split_shares(1000, 2, one_known, 10, c);
  cr_assert(c[0] == 500 && c[1] == 500);
  const double even[2] = {1, 1}; /* fewer points than a quantum: the cut rounds to 0 */
  dual_split_shares(100, 2, even, 256, c);
  cr_assert(c[0] == 0 && c[1] == 100);
  const double lopsided[3] = {1000, 1, 1}; /* a cut never passes B nor the cut before it */
  dual_split_shares(300, 3, lopsided, 256, c);
  cr_assert(c[0] == 256 && c[1] == 0 && c[2] == 44, "%lld %lld %lld", (long long)c[0], (long long)c[1],
            (long long)c[2]);
  dual_split_shares(77, 1, even, 256, c);
  cr_assert_eq(c[0], 77);
}

/* ---- AUTO's dispatch, on two CPU engines standing for the GPU and the CPU ------------------ */

#include "context.h"
#include "dispatch/dispatch.h"

static int fake_gpu_calls;
static int64_t fake_gpu_points;

/* "the GPU": the CPU engine, recording the call as a GPU run would */
static int fake_gpu(dual_context *ctx, const dual_job *job) {
#pragma omp atomic
  fake_gpu_calls++;
  fake_gpu_points = job->b->count;
  const int st = dual_cpu_run(ctx, job);
  if (st == DUAL_SUCCESS) ctx->last_device = DUAL_DEVICE_GPU, ctx->last_tier = DUAL_TIER_COMPILE;
  return st;
}

static int cpu_side(dual_context *ctx, const dual_job *job) { return dual_cpu_run(ctx, job); }

Test(dispatch_auto, the_plan_picks_the_engine_and_a_split_gives_the_same_bits) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, "input x[3]\noutput a = x[0] * exp(x[1]) - log(x[2])\noutput b = sin(x[0] * x[2])\n",
                                    "auto", &prog), DUAL_SUCCESS);
  enum { B = 20000 };
  static double x[B * 3], y0[B * 2], d0[B * 6], y1[B * 2], d1[B * 6];
  for (int i = 0; i < B * 3; ++i) x[i] = 0.3 + 0.01 * (i % 41);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = 3, b.x_es = 1, b.y = y0, b.y_ps = 2, b.y_es = 1;
  b.d = d0, b.d_ps = 6, b.d_rs = 3, b.d_cs = 1;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_JACOBIAN, job.width = 4, job.threads = 2;
  cr_assert_eq(dual_cpu_run(ctx, &job), DUAL_SUCCESS);
  dual_batch b1 = b;
  b1.y = y1, b1.d = d1;
  job.b = &b1;
  const dual_dispatch_engines e = {fake_gpu, cpu_side, 4, 1};
  /* the context's calibration: a GPU 100x the CPU, copies free, small fixed costs */
  dual_calibration c = machine();
  c.threads = 2, c.gpu_in_Bps = c.gpu_out_Bps = 1e15;
  c.cpu_call_s = c.gpu_call_s = c.split_call_s = 1e-6;
  for (int t = 0; t < 2; ++t) c.gpu_arith_s[t] = c.cpu_arith_s / 100, c.gpu_special_s[t] = c.cpu_special_s / 100;
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  fake_gpu_calls = 0;
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  cr_assert_eq(fake_gpu_calls, 1);
  int64_t g, cp;
  dual_context_last_split(ctx, &g, &cp);
  cr_assert(g == B && cp == 0, "split %lld + %lld", (long long)g, (long long)cp);
  cr_assert(memcmp(d0, d1, sizeof d0) == 0 && memcmp(y0, y1, sizeof y0) == 0);
  /* a GPU as slow as the CPU: split, each side its share, the whole call's bits */
  for (int t = 0; t < 2; ++t) c.gpu_arith_s[t] = c.cpu_arith_s / 2, c.gpu_special_s[t] = c.cpu_special_s / 2;
  *ctx->calib = c;
  dual_context_destroy(&ctx); /* (a fresh context: no measured scales from the run above) */
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  memset(y1, 0, sizeof y1), memset(d1, 0, sizeof d1);
  fake_gpu_calls = 0;
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_HYBRID, "device %d, note %s", dual_context_last_device(ctx),
               dual_context_last_note(ctx));
  dual_context_last_split(ctx, &g, &cp);
  cr_assert(g > 0 && cp > 0 && g + cp == B && g == fake_gpu_points && fake_gpu_calls == 1,
            "split %lld + %lld", (long long)g, (long long)cp);
  cr_assert_str_eq(dual_context_last_note(ctx), "", "a choice is not a note");
  cr_assert(memcmp(d0, d1, sizeof d0) == 0 && memcmp(y0, y1, sizeof y0) == 0, "the split's bits differ");
  /* both devices were measured, so the program's scales are no longer 1 */
  cr_assert_not_null(ctx->memo);
  /* with splits off (DUAL_KNOB_DISPATCH 2) the faster single device runs */
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_DISPATCH, 2), DUAL_SUCCESS);
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_neq(dual_context_last_device(ctx), DUAL_DEVICE_HYBRID);
  /* a CPU 100x the GPU: the CPU, with a note saying why */
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_DISPATCH, 0), DUAL_SUCCESS);
  for (int t = 0; t < 2; ++t) c.gpu_arith_s[t] = c.cpu_arith_s * 100, c.gpu_special_s[t] = c.cpu_special_s * 100;
  *ctx->calib = c;
  fake_gpu_calls = 0;
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_CPU);
  cr_assert_eq(fake_gpu_calls, 0);
  dual_context_last_split(ctx, &g, &cp);
  cr_assert(g == 0 && cp == B);
  cr_assert_str_eq(dual_context_last_note(ctx), "");
  cr_assert(memcmp(d0, d1, sizeof d0) == 0 && memcmp(y0, y1, sizeof y0) == 0);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* A CPU context and a small program of two inputs (the engines standing for the devices). */
static dual_program *two_input_program(dual_context **ctx, const char *name) {
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(*ctx, "input x[2]\noutput y = x[0] * exp(x[1])\n", name, &prog), DUAL_SUCCESS);
  return prog;
}

/* A device the model puts within 4x of the chosen one is tried before it is measured; one 10x
 * away is not. */
Test(dispatch_auto, an_unmeasured_device_near_the_choice_is_tried) {
  dual_context *ctx = NULL;
  dual_program *prog = two_input_program(&ctx, "explore");
  enum { B = 4096 };
  static double x[B * 2], y[B], d[B * 2];
  for (int i = 0; i < B * 2; ++i) x[i] = 0.1 + 0.001 * i;
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = 2, b.x_es = 1, b.y = y, b.y_ps = 1, b.y_es = 1, b.d = d, b.d_ps = 2, b.d_rs = 2, b.d_cs = 1;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_JACOBIAN, job.width = 2, job.threads = 2;
  const dual_dispatch_engines e = {fake_gpu, cpu_side, 2, 1};
  for (int far = 0; far < 2; ++far) {
    /* copies and fixed costs free; the GPU's kernels 2x (near) or 10x (far) the CPU's time */
    dual_calibration c = machine();
    c.threads = 2, c.gpu_in_Bps = c.gpu_out_Bps = c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 1e15;
    c.cpu_call_s = c.gpu_call_s = 1e-9, c.split_call_s = 1.0; /* (no splits) */
    const double f = far ? 10.0 : 2.0;
    for (int t = 0; t < 2; ++t)
      c.gpu_arith_s[t] = c.cpu_arith_s * f / 2, c.gpu_special_s[t] = c.cpu_special_s * f / 2,
      c.gpu_lat_arith_s[t] = c.gpu_lat_special_s[t] = 0;
    dual_context_destroy(&ctx);
    cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
    ctx->calib = malloc(sizeof c);
    *ctx->calib = c;
    fake_gpu_calls = 0;
    cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    if (far) {
      cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_CPU);
      cr_assert_eq(fake_gpu_calls, 0, "a device 10x away was tried");
    } else {
      cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU, "the GPU, 2x away and never measured, was not tried");
    }
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* ---- learning on engines of set speeds (on a virtual clock) -------------------------------- */

#include "dispatch/call_shape.h"
#include "dispatch/clock.h"

/* Each thread's virtual time: the engines below advance their own thread's, and the dispatch
 * times each side of a call on the thread that runs it. */
static _Thread_local double virtual_now;
static double virtual_clock(void) { return virtual_now; }

/* The end of a test on the virtual clock: the real clock back, the program and context freed. */
static void virtual_done(dual_context **ctx, dual_program **prog) {
  dual_dispatch_set_clock(NULL);
  dual_program_destroy(prog);
  dual_context_destroy(ctx);
}

/* The engines' speeds: the CPU's whole batch takes slow_cpu_s with all slow_threads threads
 * (its share with fewer threads proportionally longer); the GPU's takes slow_gpu_s plus
 * slow_gpu_fixed_s, a split's GPU side with k staging threads min(k, n) / n of its rate (the
 * copies need n = slow_gpu_k_need threads, four unless a test says otherwise). */
static double slow_cpu_s, slow_gpu_s, slow_gpu_fixed_s;
static int64_t slow_B;
static int slow_threads, slow_gpu_k;

static int slow_split_calls[2];  /* the GPU and the CPU sides of splits run so far */
static double slow_split_jitter; /* > 0: a split's GPU side in the second of every three splits,
                                    and its CPU side in the third, take 1 + this times as long */
static double split_jitter(int side, const dual_job *job) {
  if (job->threads >= slow_threads || !(slow_split_jitter > 0.0)) return 1.0;
  return slow_split_calls[side]++ % 3 == 1 + side ? 1.0 + slow_split_jitter : 1.0;
}

static int slow_gpu_k_need = 4; /* the staging threads a split's GPU side needs for its full rate */
static int slow_gpu_tier = DUAL_TIER_COMPILE; /* the tier the GPU reports it ran */
static int slow_gpu_spike_call;   /* > 0: the GPU's call of this number (from 1) takes */
static double slow_gpu_spike;     /* this many times as long */
static int slow_gpu(dual_context *ctx, const dual_job *job) {
  const int need = slow_gpu_k_need, k = job->threads < slow_threads ? job->threads : need;
  slow_gpu_k = job->threads;
  int call;
#pragma omp atomic capture
  call = ++fake_gpu_calls;
  const double spike = call == slow_gpu_spike_call ? slow_gpu_spike : 1.0;
  virtual_now += spike * split_jitter(0, job) *
                 (slow_gpu_fixed_s + slow_gpu_s * (double)job->b->count / (double)slow_B * need / (k < need ? k : need));
  ctx->last_device = DUAL_DEVICE_GPU, ctx->last_tier = slow_gpu_tier;
  return DUAL_SUCCESS;
}

static int slow_cpu(dual_context *ctx, const dual_job *job) {
  (void)ctx;
  virtual_now += split_jitter(1, job) * slow_cpu_s * (double)job->b->count / (double)slow_B * slow_threads / job->threads;
  return DUAL_SUCCESS;
}

/* A job of B points of a small program's Jacobian with T threads (the engines above do not read
 * its arrays). */
static void slow_job(dual_job *job, dual_batch *b, const dual_program *prog, int64_t B, int T) {
  dual_batch_init(b);
  b->count = B, b->x_ps = 2, b->x_es = 1, b->y_ps = 1, b->y_es = 1, b->d_ps = 2, b->d_rs = 2, b->d_cs = 1;
  memset(job, 0, sizeof *job);
  job->prog = prog, job->b = b, job->mode = DUAL_MODE_JACOBIAN, job->width = 2, job->threads = T;
}

/* A GPU measured slow at small batches (its fixed cost) is measured again at a batch 1000x
 * larger, where the model puts it near, rather than judged by the small batches' scale. */
Test(dispatch_auto, a_device_is_measured_again_far_from_its_calls) {
  dual_context *ctx = NULL;
  dual_program *prog = two_input_program(&ctx, "far");
  dual_dispatch_set_clock(virtual_clock);
  /* the model: the GPU and the CPU alike, no fixed costs, copies free */
  dual_calibration c = machine();
  c.threads = 2, c.gpu_in_Bps = c.gpu_out_Bps = c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 1e15;
  c.cpu_call_s = c.gpu_call_s = 1e-9, c.split_call_s = 1.0; /* (no splits) */
  for (int t = 0; t < 2; ++t)
    c.gpu_arith_s[t] = c.cpu_arith_s / 2, c.gpu_special_s[t] = c.cpu_special_s / 2, c.gpu_lat_arith_s[t] = c.gpu_lat_special_s[t] = 0;
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  dual_job job;
  dual_batch b;
  /* 100 points: the CPU 50 us, the GPU 2 ms (its fixed cost) */
  slow_threads = 2, slow_B = 100, slow_cpu_s = 50e-6, slow_gpu_s = 1e-6, slow_gpu_fixed_s = 2e-3;
  slow_job(&job, &b, prog, 100, 2);
  for (int i = 0; i < 8; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_CPU);
  /* 100000 points: the CPU 50 ms, the GPU 3 ms */
  slow_B = 100000, slow_cpu_s = 50e-3, slow_gpu_s = 1e-3;
  slow_job(&job, &b, prog, 100000, 2);
  fake_gpu_calls = 0;
  for (int i = 0; i < 4; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU, "the GPU was not measured again at 1e5 points");
  /* the first a try of the GPU, then one of the CPU (never run at this size either) */
  cr_assert_eq(fake_gpu_calls, 3, "%d GPU calls of 4", fake_gpu_calls);
  virtual_done(&ctx, &prog);
}

/* A new context, the two-input program and its job of B points with T threads, on the virtual
 * clock (the tests below give the context its calibration and the engines their speeds). */
static dual_program *virtual_split_job(dual_context **ctx, const char *name, dual_job *job, dual_batch *b, int64_t B,
                                       int T) {
  dual_program *prog = two_input_program(ctx, name);
  dual_dispatch_set_clock(virtual_clock);
  slow_job(job, b, prog, B, T);
  return prog;
}

/* The context's calibration for the job: no fixed costs, copies free, no splits, and the model's
 * times of the job's B points with T threads: the CPU's cpu_s, the GPU's interpreter's interp_s and
 * its compiled tier's compiled_s. */
static void modelled_machine(dual_context *ctx, const dual_job *job, int64_t B, int T, double cpu_s, double interp_s,
                             double compiled_s) {
  dual_calibration c = machine();
  c.threads = T, c.gpu_in_Bps = c.gpu_out_Bps = c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 1e15;
  c.cpu_call_s = c.gpu_call_s = 1e-9, c.split_call_s = 1.0; /* (no splits) */
  for (int t = 0; t < 2; ++t) c.gpu_lat_arith_s[t] = c.gpu_lat_special_s[t] = 0;
  const double want[2] = {interp_s, compiled_s};
  for (int t = 0; t < 2; ++t) {
    dual_call_shape s;
    dual_call_shape_of(job, 2, t, &s);
    const double x = want[t] / dual_model_gpu(&c, &s, B, T);
    c.gpu_arith_s[t] *= x, c.gpu_special_s[t] *= x;
    if (t == 0) {
      const double xc = cpu_s / dual_model_cpu(&c, &s, B, T);
      c.cpu_arith_s *= xc, c.cpu_special_s *= xc;
    }
  }
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
}

/* The model right (the GPU 3 ms, the CPU 50 ms at 1e5 points, no splits), but the GPU's second
 * call takes 200x its time (its first is not learned from): held back, not kept as the GPU's only
 * call, so the calls stay on the GPU (kept, it would put the GPU at 600 ms, out of reach of
 * AUTO's retries for good; on the H200 one such call left ba at 1e5 on the CPU at 1.9x). */
Test(dispatch_auto, a_slow_first_measurement_does_not_keep_a_device_out) {
  enum { B = 100000, T = 2 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "first", &job, &b, B, T);
  modelled_machine(ctx, &job, B, T, 50e-3, 3e-3, 3e-3);
  slow_threads = T, slow_B = B, slow_cpu_s = 50e-3, slow_gpu_s = 3e-3, slow_gpu_fixed_s = 0;
  slow_split_jitter = 0.0, slow_gpu_spike_call = 2, slow_gpu_spike = 200.0;
  fake_gpu_calls = 0;
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  for (int i = 0; i < 12; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  cr_assert_geq(fake_gpu_calls, 11, "%d of 12 calls on the GPU", fake_gpu_calls);
  slow_gpu_spike_call = 0;
  virtual_done(&ctx, &prog);
}

/* The GPU's figures are of one tier: measured on the interpreter (400 ms where its model says
 * 20 ms) they put the GPU out of use (the CPU 50 ms); when the compiled kernel is ready (the
 * engines' gpu_tier 1) they are forgotten and the compiled tier (3 ms) runs from its first call
 * (scaled by the interpreter's calls, it would be modelled at 60 ms).  A GPU call that reports
 * the other tier is not learned from. */
Test(dispatch_auto, the_gpu_figures_are_of_the_tier_that_ran) {
  enum { B = 100000, T = 2 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "tier", &job, &b, B, T);
  modelled_machine(ctx, &job, B, T, 50e-3, 20e-3, 3e-3);
  slow_threads = T, slow_B = B, slow_cpu_s = 50e-3, slow_gpu_s = 400e-3, slow_gpu_fixed_s = 0;
  slow_split_jitter = 0.0, slow_gpu_tier = DUAL_TIER_INTERPRET;
  const dual_dispatch_engines interp = {slow_gpu, slow_cpu, 2, 0}, compiled = {slow_gpu, slow_cpu, 2, 1};
  for (int i = 0; i < 6; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &interp), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_CPU, "the interpreter's 400 ms kept the GPU out");
  slow_gpu_s = 3e-3, slow_gpu_tier = DUAL_TIER_COMPILE, fake_gpu_calls = 0;
  for (int i = 0; i < 6; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &compiled), DUAL_SUCCESS);
  cr_assert_eq(fake_gpu_calls, 6, "%d of 6 calls on the compiled tier", fake_gpu_calls);
  /* the compiled tier's figures are not moved by a call that ran the interpreter */
  slow_gpu_s = 400e-3, slow_gpu_tier = DUAL_TIER_INTERPRET, fake_gpu_calls = 0;
  for (int i = 0; i < 10; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &compiled), DUAL_SUCCESS);
  cr_assert_eq(fake_gpu_calls, 10, "%d of 10 calls on the GPU", fake_gpu_calls);
  slow_gpu_tier = DUAL_TIER_COMPILE;
  virtual_done(&ctx, &prog);
}

/* Measured alone at 1e5 points (the GPU 40 ms, 30 of them its fixed cost; the CPU 50 ms), at 1e6
 * the model, scaled from those calls, puts the GPU at 400 ms, the CPU at 500 ms and a split well
 * below both; the GPU alone takes 130 ms there, and is measured before the split is run (the
 * CPU, modelled past 2x the GPU's measured time, is not). */
Test(dispatch_auto, a_device_measured_only_at_other_sizes_is_measured_before_a_split) {
  enum { T = 2 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "extrapolated", &job, &b, 100000, T);
  modelled_machine(ctx, &job, 100000, T, 50e-3, 40e-3, 40e-3); /* (no splits at 1e5) */
  slow_threads = T, slow_B = 100000, slow_cpu_s = 50e-3, slow_gpu_s = 10e-3, slow_gpu_fixed_s = 30e-3;
  slow_split_jitter = 0.0, slow_gpu_k_need = 1;
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  for (int i = 0; i < 8; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  ctx->calib->split_call_s = 1e-9; /* splits from now on */
  slow_job(&job, &b, prog, 1000000, T);
  dual_dispatch_plan p;
  dual_call_shape s;
  dual_call_shape_of(&job, 2, 1, &s);
  dual_dispatch_plan_call(ctx->calib, &s, T, NULL, 0, &p);
  cr_assert_eq(p.device, DUAL_DEVICE_HYBRID, "the model alone splits at 1e6");
  const double before = virtual_now;
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU, "the GPU was not measured at 1e6 first");
  near(virtual_now - before, 130e-3, "the GPU's call");
  for (int i = 0; i < 4; ++i) {
    cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
    cr_assert_neq(dual_context_last_device(ctx), DUAL_DEVICE_CPU, "the CPU, 500 ms, was tried");
  }
  slow_gpu_k_need = 4;
  virtual_done(&ctx, &prog);
}

/* The context's calibration for the job: copies free (so one staging thread is as good as any),
 * the GPU twice the CPU, so that the model splits with one staging thread; the engines: the CPU
 * 8 ms, the GPU 4 ms, whose balanced splits take (in units of the GPU's time)
 * k = 1: 1 / (1/4 + 7/16) = 1.45, k = 2: 1 / (1/2 + 6/16) = 1.14, k = 4: 1 / (1 + 4/16) = 0.8. */
static void split_machine(dual_context *ctx, const dual_job *job, int64_t B, int T) {
  dual_calibration c = machine();
  c.threads = T, c.gpu_in_Bps = c.gpu_out_Bps = c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 1e15;
  c.cpu_call_s = c.gpu_call_s = c.split_call_s = 1e-9;
  dual_call_shape s;
  dual_call_shape_of(job, 2, 1, &s);
  for (int t = 0; t < 2; ++t) c.gpu_lat_arith_s[t] = c.gpu_lat_special_s[t] = 0;
  c.gpu_arith_s[1] = c.gpu_special_s[1] = 1.0;
  const double x = 0.5 * dual_model_cpu(&c, &s, B, T) / dual_model_gpu(&c, &s, B, T);
  c.gpu_arith_s[1] = c.gpu_special_s[1] = x;
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, T, NULL, 0, &p);
  cr_assert(p.device == DUAL_DEVICE_HYBRID && p.gpu_threads == 1, "the model: device %d, k %d", p.device, p.gpu_threads);
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  slow_threads = T, slow_B = B, slow_cpu_s = 8e-3, slow_gpu_s = 4e-3, slow_gpu_fixed_s = 0;
  slow_split_jitter = 0.0, slow_split_calls[0] = slow_split_calls[1] = 0, slow_gpu_k_need = 4;
}

/* The model splits with one staging thread; measured, that split is 1.45x the GPU alone, and its
 * neighbours are tried until four threads (the copies' need) make it faster than both. */
Test(dispatch_auto, the_split_tries_its_neighbouring_staging_threads) {
  enum { T = 8, B = 32768 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "k", &job, &b, B, T);
  split_machine(ctx, &job, B, T);
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  for (int i = 0; i < 12; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_HYBRID);
  cr_assert_eq(slow_gpu_k, 4, "the split's GPU side has %d staging threads", slow_gpu_k);
  int64_t g, cp;
  dual_context_last_split(ctx, &g, &cp);
  /* balanced at four threads: the GPU side takes 4/5 of the points (to a 128-point block, and
   * the halfway moves of the measured sides) */
  cr_assert(g > B * 7 / 10 && g < B * 9 / 10, "GPU share %lld of %d", (long long)g, B);
  virtual_done(&ctx, &prog);
}

/* The same machine, a split's GPU side at its full rate with one staging thread (there, balanced,
 * 0.70 of the GPU alone), but its GPU side in one of every three splits and its CPU side in
 * another taking 1.6x as long (a side's time varies more than a device's alone: on the H200 a
 * split's sides now and then took 2-9x their usual time): two of three splits take 1.6x, their
 * median 1.11 of the GPU alone.  Each side's history settles near its faster calls and predicts
 * the split at about 0.75 of the GPU; the split's own measured-over-predicted ratios correct that,
 * and AUTO runs the GPU alone in most of the later calls (without them: the split in all but the
 * retries of the GPU). */
Test(dispatch_auto, a_split_slower_than_its_sides_predict_gives_way_to_the_device) {
  enum { T = 8, B = 32768, CALLS = 80 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "jitter", &job, &b, B, T);
  split_machine(ctx, &job, B, T);
  slow_split_jitter = 0.6, slow_gpu_k_need = 1;
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  int on_gpu = 0;
  for (int i = 0; i < CALLS; ++i) {
    cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
    on_gpu += i >= CALLS / 2 && dual_context_last_device(ctx) == DUAL_DEVICE_GPU;
  }
  cr_assert(on_gpu >= CALLS / 2 * 3 / 4, "the GPU alone in %d of the last %d calls", on_gpu, CALLS / 2);
  virtual_done(&ctx, &prog);
}

/* DUAL_KNOB_SPLIT_SHARE and _THREADS: the caller's split in every call, though the GPU alone is
 * far faster (4 ms against the CPU's 8 s), to whole blocks of the CPU engine (128 points at width
 * 2), each side at least one; the knobs' ranges; without splits the knobs are passed over. */
Test(dispatch_auto, a_fixed_split_takes_the_share_and_threads_asked) {
  enum { T = 8, B = 32768 };
  dual_context *ctx = NULL;
  dual_job job;
  dual_batch b;
  dual_program *prog = virtual_split_job(&ctx, "fixed", &job, &b, B, T);
  dual_calibration c = machine();
  c.threads = T;
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  slow_threads = T, slow_B = B, slow_cpu_s = 8.0, slow_gpu_s = 4e-3, slow_gpu_fixed_s = 0;
  const dual_dispatch_engines e = {slow_gpu, slow_cpu, 2, 1};
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_SHARE, 1000), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_THREADS, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_SHARE, 250), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_THREADS, 3), DUAL_SUCCESS);
  int64_t g, cp;
  for (int i = 0; i < 3; ++i) {
    cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
    cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_HYBRID);
    dual_context_last_split(ctx, &g, &cp);
    cr_assert(g == B / 4 && cp == B - B / 4 && slow_gpu_k == 3, "call %d: GPU %lld, CPU %lld, k %d", i, (long long)g,
              (long long)cp, slow_gpu_k);
  }
  /* 999/1000 of 32768 is 32735: 256 blocks, one too many for the CPU's side */
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_SHARE, 999), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_SPLIT_THREADS, 100), DUAL_SUCCESS);
  cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  dual_context_last_split(ctx, &g, &cp);
  cr_assert(g == B - 128 && slow_gpu_k == T - 1, "GPU %lld, k %d", (long long)g, slow_gpu_k);
  /* without splits (DUAL_KNOB_DISPATCH 2) the knob is passed over */
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_DISPATCH, 2), DUAL_SUCCESS);
  for (int i = 0; i < 4; ++i) {
    cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
    cr_assert_neq(dual_context_last_device(ctx), DUAL_DEVICE_HYBRID);
  }
  virtual_done(&ctx, &prog);
}

/* ---- the device machine's measured splits, replayed ------------------------------------------ */

#include "ref/bench_program.h"

/* kin's Jacobian at B = 1e4 on the device machine (16 threads, an H200; 2026-11-28,
 * bench/results/probe-split-2026-11-28-h200.txt): each side's seconds in a hand-made split whose
 * GPU side had k = 1, 2, 4, 8 staging threads ([log2 k]) and 1/10 ... 9/10 of the points; alone,
 * the CPU took 2.8536 ms and the GPU 3.0996 ms.  The best split there: k = 4, 3/10 on the GPU,
 * 1.97 ms (0.69x the CPU). */
static const double replay_gpu_side[4][9] = {
    {1.2938e-03, 2.2299e-03, 3.2960e-03, 4.4265e-03, 5.4274e-03, 7.8137e-03, 1.0160e-02, 1.2070e-02, 1.4194e-02},
    {1.0315e-03, 1.6550e-03, 2.0212e-03, 2.6572e-03, 3.6375e-03, 3.6326e-03, 4.4189e-03, 5.7128e-03, 6.7206e-03},
    {8.5290e-04, 1.2559e-03, 1.4182e-03, 1.8948e-03, 2.2904e-03, 2.6057e-03, 3.0689e-03, 3.5459e-03, 4.0871e-03},
    {7.8504e-04, 1.2562e-03, 1.5227e-03, 1.6187e-03, 1.8880e-03, 2.2236e-03, 2.4899e-03, 2.8417e-03, 3.1127e-03}};
static const double replay_cpu_side[4][9] = {
    {2.4959e-03, 2.0777e-03, 2.0928e-03, 1.5166e-03, 1.3553e-03, 1.3152e-03, 1.3213e-03, 9.9824e-04, 6.1089e-04},
    {3.1982e-03, 2.4267e-03, 1.9076e-03, 1.6107e-03, 1.4162e-03, 1.0866e-03, 8.4467e-04, 6.8902e-04, 5.7985e-04},
    {3.0153e-03, 2.2380e-03, 1.9524e-03, 1.5620e-03, 1.3485e-03, 1.1223e-03, 9.6364e-04, 7.7944e-04, 4.7494e-04},
    {4.6836e-03, 3.7751e-03, 3.3887e-03, 2.5986e-03, 1.9321e-03, 1.5501e-03, 1.2456e-03, 9.1872e-04, 5.8728e-04}};
enum { REPLAY_B = 10000, REPLAY_T = 16 };
static const double replay_cpu_alone = 2.8536e-3, replay_gpu_alone = 3.0996e-3;

/* A side's seconds at GPU share `share` with k staging threads: the table's, linear between
 * tenths, proportional below 1/10 and above 9/10. */
static double replay_side(const double tab[4][9], int k, double share) {
  const int j = k >= 8 ? 3 : k >= 4 ? 2 : k >= 2 ? 1 : 0;
  if (share <= 0.1) return tab[j][0] * share / 0.1;
  if (share >= 0.9) return tab[j][8] * share / 0.9;
  const int i = (int)(share * 10.0);
  const double f = share * 10.0 - i;
  return tab[j][i - 1] * (1.0 - f) + tab[j][i] * f;
}

static int replay_k;
static int replay_disturbed; /* the CPU sides of this many more splits take 2.5x their time */

static int replay_gpu(dual_context *ctx, const dual_job *job) {
  const double share = (double)job->b->count / REPLAY_B;
  if (job->threads >= REPLAY_T) virtual_now += replay_gpu_alone * share;
  else replay_k = job->threads, virtual_now += replay_side(replay_gpu_side, job->threads, share);
  ctx->last_device = DUAL_DEVICE_GPU, ctx->last_tier = DUAL_TIER_COMPILE;
  return DUAL_SUCCESS;
}

static int replay_cpu(dual_context *ctx, const dual_job *job) {
  (void)ctx;
  const double share = (double)job->b->count / REPLAY_B; /* the CPU's */
  if (job->threads >= REPLAY_T) virtual_now += replay_cpu_alone * share;
  else {
    const double slow = replay_disturbed > 0 ? 2.5 : 1.0;
    replay_disturbed -= replay_disturbed > 0;
    virtual_now += slow * replay_side(replay_cpu_side, REPLAY_T - job->threads, 1.0 - share);
  }
  return DUAL_SUCCESS;
}

/* AUTO on engines that take the device machine's measured times settles on a split within 5 %
 * of the best one measured (four staging threads, or two at a share where the table's two are
 * as fast): the sides' measured rates
 * move the balance from the model's share (over half on the GPU) to the measured one (about a
 * third), though each side's time is far from proportional to its points there. */
/* AUTO's calls of kin's Jacobian at B = 1e4 on the replay engines, `calls` of them: its last
 * split's GPU share and the table's time for it at its staging threads (0 when the last call did
 * not split). */
static double replay_auto(int calls, double *share) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  dual_program *prog = bench_program(ctx, "kin");
  dual_batch b;
  dual_batch_init(&b);
  b.count = REPLAY_B, b.x_ps = 32, b.x_es = 1, b.y_ps = 32, b.y_es = 1, b.d_ps = 1024, b.d_rs = 32, b.d_cs = 1;
  b.y = b.d = (double *)&b; /* (present, never read: the engines above take the table's times) */
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_JACOBIAN, job.width = 16, job.threads = REPLAY_T;
  /* a calibration like the device machine's: staged copies 30/28 GB/s in/out with all threads,
   * 8 GB/s with one; the CPU's figures scaled to its measured time alone */
  dual_calibration c = machine();
  c.cpu_call_s = 5e-6, c.gpu_call_s = 30e-6, c.split_call_s = 20e-6;
  c.gpu_in_Bps = 30e9, c.gpu_out_Bps = 28e9, c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 8e9;
  dual_call_shape s;
  dual_call_shape_of(&job, 16, 1, &s);
  const double x = (replay_cpu_alone - c.cpu_call_s) / (dual_model_cpu(&c, &s, REPLAY_B, REPLAY_T) - c.cpu_call_s);
  c.cpu_arith_s *= x, c.cpu_special_s *= x;
  ctx->calib = malloc(sizeof c);
  *ctx->calib = c;
  dual_dispatch_set_clock(virtual_clock);
  const dual_dispatch_engines e = {replay_gpu, replay_cpu, 16, 1};
  for (int i = 0; i < calls; ++i) cr_assert_eq(dual_dispatch_auto(ctx, &job, &e), DUAL_SUCCESS);
  double t = 0.0;
  *share = 0.0;
  if (dual_context_last_device(ctx) == DUAL_DEVICE_HYBRID) {
    int64_t g, cp;
    dual_context_last_split(ctx, &g, &cp);
    *share = (double)g / REPLAY_B;
    const double tg = replay_side(replay_gpu_side, replay_k, *share), tc = replay_side(replay_cpu_side, replay_k, *share);
    t = tg > tc ? tg : tc;
  }
  virtual_done(&ctx, &prog);
  return t;
}

Test(dispatch_auto, the_splits_measured_on_the_device_machine_are_found) {
  double share;
  const double t = replay_auto(30, &share);
  cr_assert(t > 0.0 && t < 1.05 * 1.9744e-3, "the split found: GPU share %.3f, %.4e s", share, t);
}

/* The same, the CPU sides of the first splits disturbed (2.5x their time: on the device machine
 * a side took 2-9x its usual time now and then): the splits then measure slower than the CPU
 * alone, and AUTO leaves them; run again now and then, they are found all the same. */
Test(dispatch_auto, splits_measured_slow_by_a_disturbance_are_run_again) {
  double share;
  replay_disturbed = 6;
  const double t = replay_auto(100, &share);
  cr_assert_eq(replay_disturbed, 0);
  cr_assert(t > 0.0 && t < 1.05 * 1.9744e-3, "the split found: GPU share %.3f, %.4e s", share, t);
}

/* ---- a program's measured calls --------------------------------------------------------- */

#include "dispatch/history.h"

Test(history, ratios_give_the_median_of_the_last_five_each_within_a_factor_two) {
  dual_ratios q = {.n = 0};
  near(dual_ratios_median(&q), 1.0, "none: 1");
  dual_ratios_add(&q, 3.0, 2.0);
  dual_ratios_add(&q, 5.0, 1.0); /* 5, kept as 2 */
  near(dual_ratios_median(&q), 1.0, "two: not yet");
  dual_ratios_add(&q, 1.2, 1.0);
  near(dual_ratios_median(&q), 1.5, "1.2, 1.5, 2");
  dual_ratios_add(&q, 0.1, 1.0); /* kept as 0.5 */
  near(dual_ratios_median(&q), 1.35, "0.5, 1.2, 1.5, 2: the middle two's mean");
  dual_ratios_add(&q, 1.1, 1.0);
  near(dual_ratios_median(&q), 1.2, "0.5, 1.1, 1.2, 1.5, 2");
  dual_ratios_add(&q, 0.9, 1.0); /* the first (1.5) goes */
  dual_ratios_add(&q, 0.8, 1.0); /* the second (2) goes */
  near(dual_ratios_median(&q), 0.9, "1.2, 0.5, 1.1, 0.9, 0.8");
  cr_assert_eq(q.n, DUAL_RATIOS_KEPT);
  dual_ratios_add(&q, -1.0, 1.0);
  dual_ratios_add(&q, 1.0, 0.0);
  near(dual_ratios_median(&q), 0.9, "no time, no prediction: nothing kept");
}

Test(history, one_call_scales_the_model_and_two_give_a_line) {
  const double fixed = 1e-5; /* the calibration's fixed cost */
  dual_device_history h = {{0}, {0}, 0, 0};
  near(dual_history_predict(&h, fixed, 1e-3), 1e-5 + 1e-3, "nothing kept: the model");
  /* the part over the fixed cost: t - fixed above twice it, half of t below (they meet there) */
  near(dual_history_over(fixed, 1e-3), 0.99e-3, "above");
  near(dual_history_over(fixed, 2e-5), 1e-5, "at twice the fixed cost");
  near(dual_history_over(fixed, 1e-5), 5e-6, "below");
  /* one call: 2e-3 s where the model's varying part was 1e-3 s: 1.99x over the fixed cost */
  dual_history_add(&h, fixed, 1e-3, 2e-3);
  near(dual_history_predict(&h, fixed, 2e-3), 1e-5 + 1.99e-3 * 2, "one call, scaled");
  /* a second call within 2x in v moves the first a quarter of the way up in log space (a
   * disturbance only slows a call): the first scaled to v = 1.5e-3 is 1e-5 + 2.985e-3, the new
   * call 4.2e-3 s: 2.995e-3 (4.2e-3 / 2.995e-3)^(1/4); a faster one moves it halfway down */
  dual_history_add(&h, fixed, 1.5e-3, 4.2e-3);
  cr_assert_eq(h.n, 1);
  near(h.t[0], 2.995e-3 * pow(4.2e-3 / 2.995e-3, 0.25), "merged, up");
  const double up = h.t[0];
  dual_history_add(&h, fixed, 1.5e-3, 2e-3);
  near(h.t[0], sqrt(up * 2e-3), "merged, down");
  /* a call 100x slower is held back; a second one confirms it, and it moves the estimate by at
   * most 4x */
  dual_device_history g = {{0}, {0}, 0, 0};
  dual_history_add(&g, fixed, 1e-3, 2e-3);
  dual_history_add(&g, fixed, 1e-3, 0.2);
  near(g.t[0], 2e-3, "one slow call: held back");
  cr_assert_eq(g.held, 1);
  dual_history_add(&g, fixed, 1e-3, 2.2e-3); /* not slow: the held call is forgotten */
  cr_assert_eq(g.held, 0);
  near(g.t[0], 2e-3 * pow(1.1, 0.25), "the next call merged");
  const double before = g.t[0];
  dual_history_add(&g, fixed, 1e-3, 0.2);
  dual_history_add(&g, fixed, 1e-3, 0.2);
  near(g.t[0], before * pow(0.2 / before, 0.25), "two slow calls in a row: kept, a quarter of the way");
  dual_history_add(&g, fixed, 1e-3, 1e-8);
  near(g.t[0], before * pow(0.2 / before, 0.25) / 4.0, "a far faster call: down at most 4x");
  /* a slow call at a new batch size is held back too (a workspace's first touch): the line is
   * not made from it */
  dual_device_history w = {{0}, {0}, 0, 0};
  dual_history_add(&w, fixed, 1e-4, 2e-4);
  dual_history_add(&w, fixed, 1e-3, 2.5e-2); /* predicted 1e-5 + 1.9e-3 */
  cr_assert_eq(w.n, 1);
  dual_history_add(&w, fixed, 1e-3, 1.1e-3); /* F = 1e-4, a = 1 */
  cr_assert_eq(w.n, 2);
  near(dual_history_predict(&w, fixed, 1e-2), 1e-4 + 1e-2, "the line through the undisturbed calls");
  /* two calls 10x apart in v: t = F + a v through both; the program's own fixed cost is F */
  dual_device_history l = {{0}, {0}, 0, 0};
  dual_history_add(&l, fixed, 1e-4, 2e-4);  /* F = 1e-4, a = 1 */
  dual_history_add(&l, fixed, 1e-3, 1.1e-3);
  cr_assert_eq(l.n, 2);
  near(dual_history_predict(&l, fixed, 1e-2), 1e-4 + 1e-2, "the line at 10x the larger");
  near(dual_history_predict(&l, fixed, 1e-5), 1e-4 + 1e-5, "and at a tenth of the smaller");
  /* a line that falls (noise): the kept call nearer in v, scaled */
  dual_device_history f = {{0}, {0}, 0, 0};
  dual_history_add(&f, fixed, 1e-4, 3e-4);
  dual_history_add(&f, fixed, 1e-3, 2.5e-4);
  cr_assert_eq(f.n, 2);
  near(dual_history_predict(&f, fixed, 2e-3), 1e-5 + 2.4e-4 * 2, "near the larger");
  near(dual_history_predict(&f, fixed, 5e-5), 1e-5 + 2.9e-4 * 0.5, "near the smaller");
  /* nothing kept of a call without time */
  dual_history_add(&f, fixed, 1e-3, 0.0);
  dual_history_add(&f, fixed, 0.0, 1.0);
  near(dual_history_predict(&f, fixed, 2e-3), 1e-5 + 2.4e-4 * 2, "unchanged");
  /* the first call too is held back when over 3x the model's prediction, and kept when the next
   * confirms it */
  dual_device_history s = {{0}, {0}, 0, 0};
  cr_assert_eq(dual_history_add(&s, fixed, 1e-3, 2.5e-2), 0, "25x the model: held back");
  cr_assert_eq(s.n, 0);
  near(dual_history_predict(&s, fixed, 1e-3), 1e-5 + 1e-3, "still the model");
  cr_assert_eq(dual_history_add(&s, fixed, 1e-3, 2.9e-3), 1, "2.9x: kept");
  near(dual_history_predict(&s, fixed, 1e-3), 2.9e-3, "the call kept");
  dual_device_history s2 = {{0}, {0}, 0, 0};
  dual_history_add(&s2, fixed, 1e-3, 2.5e-2);
  cr_assert_eq(dual_history_add(&s2, fixed, 1e-3, 2.4e-2), 1, "confirmed (over 2x)");
  near(dual_history_predict(&s2, fixed, 1e-3), 2.4e-2, "the confirming call kept");
}

Test(dispatch_auto, last_split_of_a_cpu_context) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, "input x\noutput y = x * x\n", "s", &prog), DUAL_SUCCESS);
  double x[5] = {1, 2, 3, 4, 5}, y[5];
  cr_assert_eq(dual_eval(ctx, prog, 5, x, 1, NULL, 0, y, 1, NULL), DUAL_SUCCESS);
  int64_t g = -1, cp = -1;
  cr_assert_eq(dual_context_last_split(ctx, &g, &cp), DUAL_SUCCESS);
  cr_assert(g == 0 && cp == 5);
  cr_assert_eq(dual_context_last_split(NULL, &g, &cp), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_last_split(ctx, NULL, NULL), DUAL_SUCCESS);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(dispatch_auto, calibrate_a_cpu_context) {
  char dir[256];
  cr_assert_eq(dual_test_temp_dir(dir, sizeof dir, "calapi"), 0);
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_cache_dir(ctx, dir), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx, 1), DUAL_SUCCESS);
  char report[2048];
  cr_assert_eq(dual_context_calibrate(ctx, report, sizeof report), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  dual_calibration c;
  cr_assert_eq(dual_calibration_parse(report, strlen(report), &c), 0, "%s", report);
  cr_assert(c.threads == 1 && c.gpu == 0 && c.cpu_arith_s > 0);
  char tiny[8];
  cr_assert_eq(dual_context_calibrate(ctx, tiny, sizeof tiny), DUAL_SUCCESS);
  cr_assert_eq(strlen(tiny), 7, "cut to cap");
  cr_assert_eq(dual_context_calibrate(ctx, NULL, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_context_calibrate(NULL, report, sizeof report), DUAL_ERR_ARGUMENT);
  dual_context_destroy(&ctx);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

Test(dispatch_auto, the_model_is_the_default) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_knob(ctx, DUAL_KNOB_DISPATCH), 0);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_DISPATCH, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_DISPATCH, 3), DUAL_ERR_ARGUMENT);
  dual_context_destroy(&ctx);
}

/* ---- the split threads ------------------------------------------------------------------ */

#include <omp.h>
#include <pthread.h>
#include <sys/wait.h>

/* Stand-in engines that note the thread they ran on and the OpenMP team a region there gets. */
static pthread_t side_thread[2];
static int side_team[2];
static int note_side(int i, const dual_job *job) {
  side_thread[i] = pthread_self();
  int team = 0;
#pragma omp parallel num_threads(job->threads)
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  side_team[i] = team;
  return DUAL_SUCCESS;
}
static int note_first(dual_context *ctx, const dual_job *job) { return (void)ctx, note_side(0, job); }
static int note_rest(dual_context *ctx, const dual_job *job) { return (void)ctx, note_side(1, job); }

Test(split, each_side_runs_on_a_kept_thread_of_its_own_and_the_caller_only_waits) {
  /* the caller's OpenMP team (single-device calls) must not shrink for a split: libgomp ends the
   * threads a smaller team leaves out, and starts them again for the next call on all threads */
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  double x[40], y[40];
  for (int i = 0; i < 40; ++i) x[i] = i;
  dual_batch b;
  dual_batch_init(&b);
  b.count = 40, b.x = x, b.x_ps = 1, b.x_es = 1, b.y = y, b.y_ps = 1, b.y_es = 1;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.b = &b, job.threads = 4;
  pthread_t seen[2] = {0};
  for (int call = 0; call < 3; ++call) {
    int sa = -1, sr = -1;
    double ta = -1.0, tr = -1.0;
    cr_assert_eq(dual_run_split(ctx, &job, 16, note_first, note_rest, 1, 3, &sa, &sr, &ta, &tr), DUAL_SUCCESS);
    cr_assert(sa == DUAL_SUCCESS && sr == DUAL_SUCCESS && ta >= 0.0 && tr >= 0.0);
    cr_assert(!pthread_equal(side_thread[0], pthread_self()) && !pthread_equal(side_thread[1], pthread_self()),
              "call %d: a side ran on the caller's thread", call);
    cr_assert(!pthread_equal(side_thread[0], side_thread[1]), "call %d: both sides on one thread", call);
    cr_assert_eq(side_team[0], 1, "call %d: the first side's team has %d threads", call, side_team[0]);
    cr_assert_eq(side_team[1], 3, "call %d: the rest's team has %d threads", call, side_team[1]);
    if (call > 0)
      cr_assert(pthread_equal(seen[0], side_thread[0]) && pthread_equal(seen[1], side_thread[1]),
                "call %d: a side's thread was not kept", call);
    seen[0] = side_thread[0], seen[1] = side_thread[1];
  }
  dual_context_destroy(&ctx);
}

Test(split, the_split_threads_are_kept_and_a_forked_child_starts_its_own) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  double secs = 0.0;
  cr_assert_eq(dual_split_handoff_seconds(ctx, &secs), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert(secs > 0.0 && secs < 0.1, "a hand-over took %g s", secs);
  const struct dual_split_worker *w = ctx->split_worker;
  cr_assert_not_null(w);
  cr_assert_eq(dual_split_handoff_seconds(ctx, &secs), DUAL_SUCCESS);
  cr_assert_eq((const void *)ctx->split_worker, (const void *)w, "the threads were started again");
  /* a child of fork() has no such threads: its first split starts its own */
  const pid_t kid = fork();
  cr_assert(kid >= 0);
  if (kid == 0) _exit(dual_split_handoff_seconds(ctx, &secs) == DUAL_SUCCESS && ctx->split_worker != NULL ? 0 : 1);
  int ws = 0;
  cr_assert_eq(waitpid(kid, &ws, 0), kid);
  cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the child's split failed (0x%x)", ws);
  dual_context_destroy(&ctx); /* (joins the threads) */
}
