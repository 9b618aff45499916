/*
 * loop_programs.h — long programs made of the language's loops, for the compiled tiers' looped
 * reverse-mode modules (jit/jit_rev_loops.c): test_jit_host runs the GPU kernels on the host,
 * test_cpu_jit the CPU's modules, both against the CPU interpreter.  Header-only.
 */
#ifndef DUAL_TEST_LOOP_PROGRAMS_H
#define DUAL_TEST_LOOP_PROGRAMS_H

/* grad (n = 1024); a sum with normal draws, a parameter and a value from before the loop; a
 * product of 400 factors (not looped: segmented modules, jit/jit_rev_segments.c); a sum that
 * computes the iteration before's square again; a running sum beside a passive running count.
 * dual_test_too_long: a product of 1000 factors, over the segmented modules' rule (2048
 * instructions), which the compiled tiers decline. */
enum { DUAL_TEST_LOOP_PROGRAMS = 5, DUAL_TEST_LOOP_PROD = 2 };
static const char *const dual_test_loop_programs[DUAL_TEST_LOOP_PROGRAMS] = {
    "input x[1024]\n"
    "let ring = sum(i in 0..1023, sin(x[i]) * x[i + 1]) + sin(x[1023]) * x[0]\n"
    "let norm = log1p(sum(i in 0..1024, square(x[i])))\n"
    "output f = ring + norm\n",
    "input x[300]\nparam w[300]\nlet c = exp(x[0])\n"
    "output f = sum(i in 0..300, w[i] * normal(x[i], 0.3) / (1.5 + cos(x[i]) * c))\n",
    "input x[400]\noutput f = prod(i in 0..400, 1 + 0.001 * x[i])\n",
    "input x[400]\noutput f = sum(i in 0..399, square(x[i + 1]) * sin(x[i]) + square(x[i]) * x[i + 1])\n",
    "input x[300]\nlet acc = 0.5\nlet cnt = 0\nfor i in 0..300 {\n  acc += sin(x[i]) * x[i]\n"
    "  cnt += (x[i] > 0)\n}\noutput f = acc * acc + cnt * x[0]\n"};
static const char *const dual_test_too_long = "input x[1000]\noutput f = prod(i in 0..1000, 1 + 0.001 * x[i])\n";

#endif /* DUAL_TEST_LOOP_PROGRAMS_H */
