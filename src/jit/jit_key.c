/* jit_key.c — the compiled tier's cache keys (jit_key.h). */
#include "jit/jit_key.h"

#include <string.h>

#include "bytecode.h"
#include "dualbatch.h"
#include "jit/jit_source.h"
#include "jit/rtc_compile.h"
#include "jit/sha256.h"

static void add_int(dual_sha256 *s, int64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = (uint8_t)((uint64_t)v >> (8 * i));
  dual_sha256_update(s, b, 8);
}

static void add_versions(dual_sha256 *s, int cc) {
  add_int(s, DUAL_VERSION_MAJOR * 1000000 + DUAL_VERSION_MINOR * 1000 + DUAL_VERSION_PATCH);
  add_int(s, DUAL_JIT_GENERATOR_VERSION);
  add_int(s, cc);
}

void dual_jit_disk_key(const char *source, int cc, int nvrtc_version, uint8_t key[32]) {
  dual_sha256 s;
  uint8_t headers[32];
  char options[512];
  dual_rtc_headers_digest(headers);
  dual_rtc_options(cc, options, sizeof options);
  dual_sha256_init(&s);
  dual_sha256_update(&s, "dualbatch-jit-disk", 19);
  dual_sha256_update(&s, source, strlen(source) + 1);
  dual_sha256_update(&s, headers, sizeof headers);
  dual_sha256_update(&s, options, strlen(options) + 1);
  add_int(&s, nvrtc_version);
  add_versions(&s, cc);
  dual_sha256_final(&s, key);
}

void dual_jit_memory_key(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                         int cc, uint8_t key[32]) {
  dual_sha256 s;
  dual_sha256_init(&s);
  dual_sha256_update(&s, "dualbatch-jit-memory", 21);
  const int64_t shape[8] = {prog->n_in, prog->n_par, prog->n_out, prog->n_regs,
                            prog->n_active, prog->n_const, prog->n_instr, mode};
  for (int i = 0; i < 8; ++i) add_int(&s, shape[i]);
  add_int(&s, width);
  add_int(&s, npass);
  add_int(&s, min_blocks);
  dual_sha256_update(&s, prog->code, (size_t)prog->n_instr * DUAL_INSTR_WORDS * sizeof(uint32_t));
  dual_sha256_update(&s, prog->consts, (size_t)prog->n_const * sizeof(double));
  if (prog->seed_lane != NULL) { /* a colored view (program.h): its seeding */
    add_int(&s, prog->n_seed);
    dual_sha256_update(&s, prog->seed_lane, (size_t)prog->n_in * sizeof(int32_t));
  }
  add_versions(&s, cc);
  dual_sha256_final(&s, key);
}

void dual_jit_cpu_disk_key(const char *source, const char *identity, uint8_t key[32]) {
  dual_sha256 s;
  uint8_t headers[32];
  dual_rtc_headers_digest(headers);
  dual_sha256_init(&s);
  dual_sha256_update(&s, "dualbatch-cpu-jit-disk", 23);
  dual_sha256_update(&s, source, strlen(source) + 1);
  dual_sha256_update(&s, headers, sizeof headers);
  dual_sha256_update(&s, identity, strlen(identity) + 1);
  add_versions(&s, -1);
  dual_sha256_final(&s, key);
}
